"""The one command model: how a shell command is tokenised, unwrapped and normalised, and what it reads and writes.

The ground the agent's gate, the scorer and the fix trials stand on alike, so a blind spot is found once and fixed
once; it imports none of them.
"""
