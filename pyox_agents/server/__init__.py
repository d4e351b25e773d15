"""The HTTP server: `create_app(agents, store=...)` serves agents to AG-UI and AI SDK frontends."""

from pyox_agents.server._gc import tune_gc
from pyox_agents.server.app import bearer_tokens, create_app
from pyox_agents.service import ServerLimits

__all__ = ["ServerLimits", "bearer_tokens", "create_app", "tune_gc"]
