"""An Azure Resource Manager emulator for the lab: the subscription's network resources over HTTPS, as the SDK sees them."""

from __future__ import annotations

from ghost_eval.lab.arm.seed import BASELINE_SERVICE_ENDPOINTS, seed
from ghost_eval.lab.arm.server import ArmServer, RecordedRequest
from ghost_eval.lab.arm.state import ArmError, ArmState

__all__ = ["BASELINE_SERVICE_ENDPOINTS", "ArmError", "ArmServer", "ArmState", "RecordedRequest", "seed"]
