"""Imports run one way, down the floors of `tests.layers_map.FLOORS`, with no circle between modules.

Read from the source with `ast` (every import, including those inside functions, under TYPE_CHECKING and the lazy
homes a package names as strings), not by importing, so a lazy import that runs back up is caught as well as a
top-level one. `python -m tests.layers_map` prints the drawing.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.layers_map import (
    FLOORS,
    circles,
    imported_modules,
    module_graph,
    room_graph,
    upward_arrows,
)

PACKAGE = REPO / "ghost_eval"

FORBIDDEN = {
    "connect": ("agent", "lab", "live", "trials", "judge"),
    "agent": ("live", "scoring", "evaluation", "judge"),
    "lab": ("live",),
    "store": ("scoring", "evaluation", "judge"),
    "shell": ("agent", "scoring", "trials", "evaluation", "store", "judge", "live", "lab"),
}
"""Subpackage → the subpackages it must never import: the measured agent and the store know nothing of the scorer,
and the command model knows nothing of those that read commands through it."""


@cache
def _package() -> dict[str, set[str]]:
    return module_graph()


def _imports_of(path: Path) -> set[str]:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return imported_modules(path.read_text(), ".".join(parts[:-1] if is_package else parts), is_package=is_package)


def forbidden_imports(files: list[Path], banned_modules: tuple[str, ...]) -> list[str]:
    """`file: module` for each import in `files` of one of `banned_modules` or anything inside them."""
    return [
        f"{path.relative_to(REPO)}: {module}"
        for path in files
        for module in sorted(_imports_of(path))
        if module in banned_modules or module.startswith(tuple(f"{b}." for b in banned_modules))
    ]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_import_runs_back_up(layer: str) -> None:
    assert (PACKAGE / layer).is_dir()
    files = sorted((PACKAGE / layer).rglob("*.py"))
    assert forbidden_imports(files, tuple(f"ghost_eval.{name}" for name in FORBIDDEN[layer])) == []


def test_the_provider_adapters_never_import_the_assertion_path() -> None:
    """One direction between the two Promptfoo adapters: grading calls the providers' code, never the reverse."""
    files = [PACKAGE / "promptfoo" / "adapters.py", PACKAGE / "promptfoo" / "keys.py"]
    assert forbidden_imports(files, ("ghost_eval.promptfoo.grading",)) == []
    assert forbidden_imports([PACKAGE / "promptfoo" / "keys.py"], ("ghost_eval.promptfoo.adapters",)) == []


def test_every_arrow_runs_down_the_floors() -> None:
    assert upward_arrows(room_graph(_package())) == []


def test_every_room_is_on_the_map_and_no_module_sits_loose_at_the_root() -> None:
    rooms = set(room_graph(_package()))
    placed = {room for floor in FLOORS for room in floor}
    assert rooms == placed
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py"]


def test_no_circle_between_modules() -> None:
    assert circles(_package()) == []


def test_the_checks_can_fail() -> None:
    """A check that can never fail is no check: a circle, an arrow up and an unplaced room are each found."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert upward_arrows({"base": {"store"}, "store": {"base"}}) == [("base", "store")]
    assert upward_arrows({"scoring": {"store"}}) == [("scoring", "store")]  # beside, not below
    assert upward_arrows({"nowhere": {"base"}}) == [("nowhere", "base")]


def test_the_check_sees_relative_lazy_and_from_package_imports() -> None:
    """An import written another way must not slip past."""
    source = "def f():\n    from ..live import run\n    from ghost_eval import judge\n    import ghost_eval.trials.trial\n"
    found = imported_modules(source, "ghost_eval.connect.probe")
    assert {"ghost_eval.live.run", "ghost_eval.judge", "ghost_eval.trials.trial"} <= found
    assert imported_modules("from . import ssh\n", "ghost_eval.connect", is_package=True) >= {"ghost_eval.connect.ssh"}


def test_a_lazy_home_is_an_arrow_and_a_bare_package_import_is_not(tmp_path: Path) -> None:
    package = tmp_path / "ghost_eval"
    (package / "store").mkdir(parents=True)
    (package / "base").mkdir()
    (package / "__init__.py").write_text("")
    (package / "store" / "__init__.py").write_text("import ghost_eval\n_HOMES = {'X': 'ghost_eval.base.lazy'}\n")
    (package / "base" / "__init__.py").write_text("")
    (package / "base" / "lazy.py").write_text("from ghost_eval import store\n")
    graph = module_graph(package)
    assert graph["ghost_eval.store"] == {"ghost_eval.base.lazy"}
    assert graph["ghost_eval.base.lazy"] == {"ghost_eval.store"}
    assert circles(graph) == [["ghost_eval.base.lazy", "ghost_eval.store"]]
