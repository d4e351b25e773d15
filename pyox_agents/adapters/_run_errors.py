"""What a client reads of a failed run: the same public message and code on every protocol.

A run's `AgentError` keeps its whole account in `message` (the run's record and the server's
log have it) and gives clients `public_message`: an internal error's exception text, a store's
or a provider's URL, never leave the server. Both protocols send `error.public_message` and
`error.code`; `INTERNAL_ERROR_MESSAGE` is what an internal error reads.
"""

from __future__ import annotations

from pyox_agents.state._run_parts import INTERNAL_ERROR_MESSAGE

__all__ = ["INTERNAL_ERROR_MESSAGE"]
