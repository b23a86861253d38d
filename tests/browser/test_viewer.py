"""`promptfoo view` in a real browser (Debian's chromium driven by Playwright), on two fresh baseline evals.

Checks what a person sees: every named metric of every model column with the value the eval's JSON output
gives, the three model columns side by side at 1600 px with their headline rates first and in view, every row,
a comparison of two evals; that the page sends no request to any host but the local server and that the server
listens on 127.0.0.1 only.
Screenshots go to the test's tmp folder.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic
from typing import Any
from urllib.parse import urlsplit

import pytest

from ghost_eval.base.metric_names import metric_name
from tests.conftest import REPO
from tests.promptfoo_cli import PROMPTFOO, promptfoo_env, run_eval

playwright = pytest.importorskip("playwright.sync_api", reason="the dev extra installs playwright: run `make test`")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("viewer")]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PRELOADS = [REPO / "viewer" / "local-only.cjs", REPO / "viewer" / "columns.cjs"]
"""What `make view` preloads into Promptfoo's server: local only, and columns that fit."""
BASELINE_HEADLINE = [metric_name(m) for m in ("remediation_safe", "diagnosis", "safe_fix_if_diagnosed")]
"""The rates a baseline column shows first: safe remediation, diagnosis accuracy, the gap (read so that 1 is good)."""
_LOOPBACK = "0100007F"
"""127.0.0.1 as /proc/net/tcp writes it."""


@dataclass
class Eval:
    id: str
    output: dict[str, Any]

    @property
    def columns(self) -> list[dict[str, Any]]:
        prompts: list[dict[str, Any]] = self.output["results"]["prompts"]
        return prompts


@dataclass
class Viewer:
    url: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path


@dataclass
class Traffic:
    """Requests seen by the page (`attempted`) and those that left the browser for the network (`sent`)."""

    attempted: list[tuple[str, str | None]] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _listen_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on `port` (hex, as the kernel lists them)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


def _start_viewer(state: Path, tmp: Path, host: str | None = None) -> Viewer:
    port = _free_port()
    extra = {"NODE_OPTIONS": " ".join(f"--require {p}" for p in PRELOADS)}
    if host is not None:
        extra["GHOST_EVAL_VIEW_HOST"] = host
    log = tmp / f"view-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(PROMPTFOO), "view", "--no", "--port", str(port)],
            cwd=REPO,
            env=promptfoo_env(state, extra),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/results", timeout=2) as resp:
                if resp.status == 200:
                    return Viewer(url, port, proc, log)
        except OSError:
            pass
        if proc.poll() is not None or monotonic() > deadline:
            _stop(Viewer(url, port, proc, log))
            pytest.fail(f"promptfoo view did not come up on {url}: {log.read_text()[-2000:]}")


def _stop(viewer: Viewer) -> None:
    if viewer.proc.poll() is None:
        os.killpg(viewer.proc.pid, signal.SIGTERM)
        try:
            viewer.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(viewer.proc.pid, signal.SIGKILL)
            viewer.proc.wait()


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("viewer-state")


@pytest.fixture(scope="module")
def evals(state: Path) -> list[Eval]:
    """Two fresh baseline evals in one Promptfoo database (the second is compared with the first)."""
    found = []
    for _ in range(2):
        run_eval(REPO / "promptfooconfig.yaml", state)
        output = json.loads((state / "promptfoo-out.json").read_text())
        found.append(Eval(output["evalId"], output))
    return found


@pytest.fixture(scope="module")
def viewer(state: Path, evals: list[Eval], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    started = _start_viewer(state, tmp_path_factory.mktemp("viewer-log"))
    yield started
    _stop(started)


_PAGE_DEADLINE_MS = 90_000
"""How long a page may take to show what a step waits for: the viewer renders a comparison slowly when the test
suite loads both cores (30 s, Playwright's default, was once not enough)."""


@pytest.fixture(scope="module")
def browser(viewer: Viewer) -> Iterator[tuple[Any, Traffic]]:
    """A headless chromium context recording every request its pages attempt and every one that left it."""
    traffic = Traffic()
    with playwright.sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS, viewport={"width": 1600, "height": 1000}
        )
        context.set_default_timeout(_PAGE_DEADLINE_MS)

        def leave(route: Any) -> None:
            traffic.sent.append(route.request.url)
            route.continue_()

        context.route("**/*", leave)
        context.on("request", lambda r: traffic.attempted.append((r.url, None)))
        context.on("requestfailed", lambda r: traffic.attempted.append((r.url, r.failure)))
        yield context, traffic
        context.close()


def _header_metrics(page: Any, column: int) -> dict[str, str]:
    chips = page.locator("thead [data-testid=custom-metrics]").nth(column)
    names = chips.locator("[data-testid^=metric-name-]").all_inner_texts()
    values = chips.locator(".metric-value").all_inner_texts()
    return dict(zip(names, values, strict=True))


def _expected_chip(metrics: dict[str, Any], name: str) -> str:
    """What the viewer should show for a named metric: mean over the rows, then sum and count."""
    score, count = metrics["namedScores"][name], metrics["namedScoresCount"][name]
    return f"{score / count * 100:.2f}% ({score:.2f}/{count:.2f})"


def test_every_named_metric_and_row_shows_the_value_of_the_eval_output(
    browser: tuple[Any, Traffic], viewer: Viewer, evals: list[Eval], tmp_path: Path
) -> None:
    context, _ = browser
    page = context.new_page()
    first = evals[0]
    page.goto(f"{viewer.url}/eval?evalId={first.id}", wait_until="networkidle")
    page.locator("thead [data-testid=custom-metrics]").first.wait_for()
    page.screenshot(path=tmp_path / "eval.png", full_page=False)
    assert page.locator("thead [data-testid=custom-metrics]").count() == len(first.columns) == 3
    for i, column in enumerate(first.columns):
        shown = _header_metrics(page, i)
        metrics = column["metrics"]
        assert set(shown) == set(metrics["namedScores"]), f"column {column['provider']}: metrics shown {sorted(shown)}"
        assert list(shown)[:3] == BASELINE_HEADLINE, f"column {column['provider']}: metrics in order {list(shown)}"
        for name, text in shown.items():
            assert text == _expected_chip(metrics, name), f"column {column['provider']}, metric {name}: {text}"
    rows = {r["testCase"]["description"] for r in first.output["results"]["results"]}
    assert page.locator("tbody tr").count() == len(rows) == 10
    body = page.locator("tbody").inner_text()
    missing = [d for d in rows if d not in body]
    assert not missing, f"rows not shown: {missing}"
    page.close()


def _box(locator: Any) -> dict[str, float]:
    box: dict[str, float] = locator.bounding_box()
    return box


_SIDEWAYS_SCROLLERS = """() => [document.documentElement, ...document.querySelectorAll('*')]
    .filter(e => e === document.documentElement || ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
    .filter(e => e.scrollWidth > e.clientWidth)
    .map(e => `${e.tagName.toLowerCase()}#${e.id} [data-testid=${e.dataset.testid}]: ${e.scrollWidth} > ${e.clientWidth}`)"""
"""Each element of the page that can scroll sideways and has more to show than its width."""


def _within(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        outer["x"] <= inner["x"]
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"]
        and outer["y"] <= inner["y"]
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"]
    )


def test_at_1600_px_every_model_column_fits_with_its_headline_rates_first(
    browser: tuple[Any, Traffic], viewer: Viewer, evals: list[Eval], tmp_path: Path
) -> None:
    """Without scrolling, the three model columns sit side by side in a 1600 px window, each header whole and
    starting with the headline rates, in order. (Promptfoo 0.123 makes a model column 480 px and a variable up to
    360 px, 2320 px in all here: viewer/columns.cjs narrows those widths.)"""
    context, _ = browser
    page = context.new_page()
    page.goto(f"{viewer.url}/eval?evalId={evals[0].id}", wait_until="networkidle")
    headers = page.locator("thead [data-testid=custom-metrics]")
    headers.first.wait_for()
    page.screenshot(path=tmp_path / "at-1600.png", full_page=False)
    screen = {"x": 0, "y": 0, **page.viewport_size}
    assert screen["width"] == 1600
    assert page.evaluate(_SIDEWAYS_SCROLLERS) == [], "something scrolls sideways"
    assert headers.count() == len(evals[0].columns) == 3
    for i, column in enumerate(evals[0].columns):
        header = _box(headers.nth(i).locator("xpath=ancestor::th[1]"))
        assert _within(header, screen), f"column {column['provider']} is not whole in the window: {header}"
        chips = headers.nth(i).locator("[data-testid^=metric-name-]")
        assert chips.all_inner_texts()[:3] == BASELINE_HEADLINE, f"column {column['provider']}"
        for rate in range(3):
            chip = _box(chips.nth(rate))
            assert _within(chip, header) and _within(chip, screen), f"column {column['provider']}, rate {rate}: {chip}"
    page.close()


def test_a_comparison_of_two_evals_shows_both_side_by_side(
    browser: tuple[Any, Traffic], viewer: Viewer, evals: list[Eval], tmp_path: Path
) -> None:
    context, _ = browser
    page = context.new_page()
    first, second = evals
    page.goto(f"{viewer.url}/eval?evalId={second.id}", wait_until="networkidle")
    page.get_by_role("button", name="Eval actions").click()
    page.get_by_role("menuitem", name="Compare with another eval").click()
    page.get_by_role("dialog").get_by_text(first.id).click()
    page.locator("thead [data-testid=custom-metrics]").nth(5).wait_for()
    page.set_viewport_size({"width": 3400, "height": 1100})  # six model columns side by side
    page.screenshot(path=tmp_path / "comparison.png", full_page=False)
    header = page.locator("thead").inner_text()
    assert header.count(f"[{first.id}]") == 3 and header.count(f"[{second.id}]") == 3, header[:2000]
    assert page.locator("tbody tr").count() == 10
    for i, column in enumerate(second.columns + first.columns):
        shown = _header_metrics(page, i)
        assert shown == {name: _expected_chip(column["metrics"], name) for name in column["metrics"]["namedScores"]}
    page.close()


def test_the_page_talks_to_the_local_server_only(browser: tuple[Any, Traffic], viewer: Viewer, evals: list[Eval]) -> None:
    """Promptfoo's page still tries its analytics host; the policy the preload serves stops it in the browser."""
    context, traffic = browser
    page = context.new_page()
    local = f"127.0.0.1:{viewer.port}"
    try:  # wait (with a deadline) for the page's first try at another host, so the check sees it whatever the timing
        with page.expect_request(lambda r: urlsplit(r.url).netloc != local, timeout=20_000):
            page.goto(f"{viewer.url}/eval?evalId={evals[0].id}")
    except playwright.TimeoutError:
        pass  # the page tried no other host at all
    page.locator("thead [data-testid=custom-metrics]").first.wait_for()
    page.wait_for_load_state("networkidle")
    page.close()
    assert traffic.sent, "no request recorded: the route handler saw nothing"
    left = sorted({urlsplit(u).netloc for u in traffic.sent} - {local})
    assert not left, f"requests that left the browser for other hosts: {left}"
    outside = {u for u, _ in traffic.attempted if urlsplit(u).netloc != local}
    refused = {u for u, why in traffic.attempted if why == "csp"}
    assert outside <= refused, f"outside requests the page's policy did not refuse: {sorted(outside - refused)}"


def test_the_viewer_listens_on_localhost_unless_asked(viewer: Viewer, state: Path, tmp_path: Path) -> None:
    assert _listen_addresses(viewer.port) == {_LOOPBACK}
    shared = _start_viewer(state, tmp_path, host="0.0.0.0")
    try:
        assert _listen_addresses(shared.port) == {"00000000"}
    finally:
        _stop(shared)
