"""`python -m ghost_eval.agent`: run the reference agent (see `ghost_eval.agent.cli`)."""

from __future__ import annotations

import sys

from ghost_eval.agent.cli import main

__all__: list[str] = []

sys.exit(main())
