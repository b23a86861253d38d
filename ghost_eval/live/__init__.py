"""Live runs against real infrastructure or the local lab: the target, fault recipes and the infrastructure snapshot.

Submodules are imported where used (`ghost_eval.live.target`, `.recipes`, `.snapshot`) so that importing the
package stays cheap for code that needs only one of them.
"""

from __future__ import annotations

__all__: list[str] = []
