"""A module over 600 lines says why in its opening comment, so a long file is a decision, not an accident."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO

LIMIT = 600
MARK = "# Over 600 lines: "


def unexplained(package: Path) -> list[str]:
    """Modules of `package` over the limit whose first three lines carry no `# Over 600 lines: <reason>`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        lines = path.read_text().splitlines()
        reason = next((line[len(MARK) :] for line in lines[:3] if line.startswith(MARK)), "")
        if len(lines) > LIMIT and len(reason.strip()) < 20:
            found.append(f"{path.relative_to(package.parent)}: {len(lines)} lines")
    return found


def test_every_module_over_600_lines_says_why() -> None:
    assert unexplained(REPO / "ghost_eval") == []


def test_the_check_finds_a_long_module_without_a_reason(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    (package / "short.py").write_text("x = 1\n" * LIMIT)
    (package / "vague.py").write_text(MARK + "big\n" + "x = 1\n" * LIMIT)
    (package / "said.py").write_text(MARK + "one parser shared by three readers\n" + "x = 1\n" * LIMIT)
    assert unexplained(package) == [f"pkg/long.py: {LIMIT + 1} lines", f"pkg/vague.py: {LIMIT + 1} lines"]
