"""The HTTP server: `create_app(agents, store=...)` serves agents to AG-UI and AI SDK frontends."""

from pyox_agents.server.app import create_app

__all__ = ["create_app"]
