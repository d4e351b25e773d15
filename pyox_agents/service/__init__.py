"""Protocol-free serving: one active run per thread, leases and fencing, following a run on any
process, the pending-approval lookup, opening a thread's conversation, and a principal's threads
as a resource (list, rename, archive, delete, history, fork, rewind, undo)."""

from pyox_agents._run_request import Busy, Decision, RequestError, RunRequest, ToolOutput
from pyox_agents.service._client_runs import CLIENT_RUN_ID
from pyox_agents.service._connect import Rejoined, rejoin
from pyox_agents.service._feed import follow_thread
from pyox_agents.service._limits import ServerLimits
from pyox_agents.service._live import LiveRun
from pyox_agents.service._owned_threads import (
    delete_thread,
    list_threads_page,
    thread_history,
    thread_store,
    update_thread,
)
from pyox_agents.service._runs import LOOK_UP, RunService
from pyox_agents.service._state_edits import edit_state, thread_with_state
from pyox_agents.service._threads import thread_view
from pyox_agents.service._time_travel import fork_thread, rewind_thread, undo_run
from pyox_agents.service._transcript import transcript

__all__ = [
    "CLIENT_RUN_ID",
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
    "delete_thread",
    "edit_state",
    "follow_thread",
    "fork_thread",
    "list_threads_page",
    "rejoin",
    "rewind_thread",
    "thread_history",
    "thread_store",
    "thread_view",
    "thread_with_state",
    "transcript",
    "undo_run",
    "update_thread",
]
