"""The reference Ghost Agent: Claude and Gemini tool loops that investigate a network fault through a safety gate.

Modules, one job each (imported where used, so `ghost_eval.agent.gate` stays cheap for the CLI):
`gate` classifies a shell command (safe / needs_approval / forbidden), with `reach` listing what no safe command may
reach (secret paths, devices, the network with local data, root); `approval` decides who lets it run;
`redact` strips secrets; `shell` and `control_plane` are the OS-layer (SSH) and Azure inspectors; `tools`
holds the tool schemas and the dispatcher; `loop` is the vendor-neutral tool loop with its
`anthropic_adapter` and `gemini_adapter`; `prompt` builds the system prompt and its hashes; `runner` runs
one investigation; `capture` writes its artifacts and prepares them for the store; `cli` is
`python -m ghost_eval.agent`.
"""

from __future__ import annotations

__all__: list[str] = []
