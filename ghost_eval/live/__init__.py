"""Live runs against real infrastructure or the local lab: fault recipes, their symptoms, the infrastructure snapshot
and the run itself. How the infrastructure is reached (the target, SSH, Azure clients) is `ghost_eval.connect`.

Submodules are imported where used (`ghost_eval.live.recipes`, `.snapshot`, `.run`) so that importing the
package stays cheap for code that needs only one of them.
"""

from __future__ import annotations

__all__: list[str] = []
