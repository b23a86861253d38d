"""How the suite reaches infrastructure: the target file, SSH sessions, Azure management clients, and reading
effective routes and security rules. The agent, the lab, live runs and fix trials all stand on this package;
it imports none of them.

Submodules are imported where used (`ghost_eval.connect.target`, `.ssh`, `.azure`, `.effective`) so that code
needing the target file alone does not load paramiko or the Azure SDK.
"""

from __future__ import annotations

__all__: list[str] = []
