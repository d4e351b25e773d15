"""Protocol adapters: AG-UI (`ag_ui`) and the AI SDK UI message stream (`ai_sdk`).

Pure translation: a request becomes a `RunRequest`, runtime events become protocol events. No
adapter decides what the agent does.
"""

__all__: list[str] = []
