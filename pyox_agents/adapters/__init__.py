"""Protocol adapters: AG-UI (`ag_ui`) and the AI SDK UI message stream (`ai_sdk`).

Pure translation: a request becomes a `RunRequest`, runtime events become protocol events. No
adapter decides what the agent does. Both number the frames of a run's stream the same way
(`Cursor`, `parse_cursor`: where a reader that comes back resumes). Every body is read as JSON
one way (`read_json`: a 400 that says what is wrong).
"""

from pyox_agents.adapters._body import read_json
from pyox_agents.adapters._event_ids import Cursor, parse_cursor

__all__ = ["Cursor", "parse_cursor", "read_json"]
