"""Protocol-free serving: one active run per thread, leases, following a run, thread state."""

from pyox_agents.service._runs import LiveRun, RequestError, RunService, ServerLimits

__all__ = ["LiveRun", "RequestError", "RunService", "ServerLimits"]
