"""The package's import drawing: its rooms top to bottom, the arrows that run back up, and the circles.

Read from the source with `ast`, not by importing: every import counts, including those inside functions, under
TYPE_CHECKING, and the lazy ones a package names as a string for `lazy_getattr` (`_HOMES`). A room is a subpackage
of `ghost_eval` or a module at its root; the package's own `__init__` is the public face and sits on top. A bare
`import ghost_eval` (asked for where the package lives, `ghost_eval.__file__`) is not an arrow: every import runs the
package's `__init__` anyway, and it names nothing of a room.

    .venv/bin/python -m tests.layers_map
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "ghost_eval"
TOP = "ghost_eval"

FLOORS: tuple[tuple[str, ...], ...] = (
    (TOP,),
    ("cli",),
    ("report",),
    ("promptfoo", "trials"),
    ("live",),
    ("agent", "decide", "judge", "scaffold"),
    ("evaluation", "lab"),
    ("scoring", "store"),
    ("shell", "connect", "llm"),
    ("cases", "run"),
    ("base",),
)
"""The rooms top to bottom: a room imports only rooms on floors below its own, never one beside it or above."""

__all__ = [
    "FLOORS",
    "PACKAGE",
    "circles",
    "imported_modules",
    "lazy_homes",
    "module_graph",
    "modules",
    "room_graph",
    "room_of",
    "upward_arrows",
]


def imported_modules(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every name the source of `module` imports, relative imports resolved to absolute names.

    `import a.b` yields `a.b`; `from a import b` yields `a.b` (b may be a module or a name in `a`); a string constant
    that looks like a dotted name in the package (a lazy home such as `_HOMES`) yields that name.
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            imported = ".".join([*base, *([node.module] if node.module else [])])
            found.update(imported if alias.name == "*" else f"{imported}.{alias.name}" for alias in node.names)
    return found


def lazy_homes(source: str) -> set[str]:
    """String constants that look like a dotted name in the package: homes a module imports by name."""
    return {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith(f"{TOP}.")
        and all(part.isidentifier() for part in node.value.split("."))
    }


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name → source file, for every module of the package."""
    found: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The package module `name` lands in: itself, or the nearest enclosing module (`a.b.Name` → `a.b`)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def module_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the package modules it imports. A string naming a module counts only when it is exactly one (a
    module run with `-m` or a lazy home); the parent package a submodule's import runs first is not an arrow."""
    known = modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        source = path.read_text()
        imported = imported_modules(source, name, is_package=path.name == "__init__.py")
        imported.discard(TOP)
        targets = {_resolve(i, known) for i in imported} | (lazy_homes(source) & known.keys())
        graph[name] = {t for t in targets if t and t != name}
    return graph


def room_of(module: str) -> str:
    """`ghost_eval.scoring.registry` → `scoring`, `ghost_eval.base.errors` → `base`, `ghost_eval` → `ghost_eval`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else TOP


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Room → the rooms it imports (arrows inside one room left out)."""
    rooms: dict[str, set[str]] = {}
    for source, targets in graph.items():
        rooms.setdefault(room_of(source), set()).update(room_of(t) for t in targets if room_of(t) != room_of(source))
    return rooms


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found, key=lambda c: (-len(c), c))


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each node's floor: 0 for a node importing nothing, else one above the highest it imports (a circle shares
    one floor)."""
    members = {node: next((c for c in circles(graph) if node in c), [node]) for node in graph}
    floor: dict[str, int] = {}

    def height(node: str) -> int:
        if node in floor:
            return floor[node]
        group = members[node]
        below = {t for n in group for t in graph.get(n, ()) if t not in group}
        value = 1 + max((height(t) for t in below), default=-1)
        for n in group:
            floor[n] = value
        return value

    for node in graph:
        height(node)
    return floor


def floor_of(room: str) -> int | None:
    """The room's floor in `FLOORS`, 0 at the top; None for a room the map does not place."""
    return next((i for i, rooms in enumerate(FLOORS) if room in rooms), None)


def upward_arrows(rooms: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(room, imported room) for each arrow that does not run down `FLOORS`: to a room beside or above, or from or to
    a room the map does not place."""
    wrong = []
    for source, targets in sorted(rooms.items()):
        for target in sorted(targets):
            here, there = floor_of(source), floor_of(target)
            if here is None or there is None or there <= here:
                wrong.append((source, target))
    return wrong


def _arrows(graph: dict[str, set[str]]) -> int:
    return sum(len(t) for t in graph.values())


def _print(lines: Iterable[str]) -> None:
    for line in lines:
        print(line)


def main() -> None:
    graph = module_graph()
    rooms = room_graph(graph)
    floor = floors(rooms)
    module_circles = circles(graph)
    room_circles = circles(rooms)
    print(f"{len(graph)} modules, {_arrows(graph)} arrows; {len(rooms)} rooms, {_arrows(rooms)} arrows")
    print(f"floors: {max(floor.values()) + 1}")
    for level in sorted(set(floor.values()), reverse=True):
        _print(
            f"  {level:2d}  {room}  → {', '.join(sorted(rooms[room])) or '-'}"
            for room in sorted(r for r in rooms if floor[r] == level)
        )
    upward = upward_arrows(rooms)
    print("declared floors, top to bottom:")
    _print(f"  {i:2d}  {', '.join(f)}" for i, f in enumerate(FLOORS))
    print(f"arrows not running down the declared floors: {len(upward)}")
    _print(f"  {a} → {b}" for a, b in upward)
    print(f"room circles: {len(room_circles)}")
    _print(f"  {' ↔ '.join(c)}" for c in room_circles)
    print(f"module circles: {len(module_circles)}")
    _print(f"  {' ↔ '.join(c)}" for c in module_circles)


if __name__ == "__main__":
    main()
