"""Protocol-free serving: one active run per thread, leases and fencing, following a run on any
process, the pending-approval lookup, and opening a thread's conversation."""

from pyox_agents._run_request import Busy, Decision, RequestError, RunRequest, ToolOutput
from pyox_agents.service._connect import Rejoined, rejoin
from pyox_agents.service._limits import ServerLimits
from pyox_agents.service._live import LiveRun
from pyox_agents.service._runs import LOOK_UP, RunService
from pyox_agents.service._threads import thread_view

__all__ = [
    "LOOK_UP",
    "Busy",
    "Decision",
    "LiveRun",
    "Rejoined",
    "RequestError",
    "RunRequest",
    "RunService",
    "ServerLimits",
    "ToolOutput",
    "rejoin",
    "thread_view",
]
