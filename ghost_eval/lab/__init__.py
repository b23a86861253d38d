"""The local lab: two network-namespace VMs with real sshd, firewalls, tc and fail2ban, and an Azure ARM emulator.

`lab_up()` builds it and returns the `Target` that live runs, the snapshot and the reference agent use;
`lab_down()` removes every trace of it, even after a crash; `lab_status()` says what answers.
"""

from __future__ import annotations

from ghost_eval.lab.control import LabStatus, lab_down, lab_status, lab_up
from ghost_eval.lab.errors import LabError
from ghost_eval.lab.layout import LabLayout

__all__ = ["LabError", "LabLayout", "LabStatus", "lab_down", "lab_status", "lab_up"]
