"""The seven features CopilotKit users build with, each as an agent (the AG-UI dojo's list).

- agentic chat (`agentic_chat_agent`): the page offers `change_background` and says who the
  person is;
- backend tool rendering (`backend_tool_rendering_agent`): the page draws `get_weather`'s result;
- human in the loop (`human_in_the_loop_agent`): the person picks steps (`select_steps`) and
  approves `book_flight`;
- agentic generative UI (`agentic_generative_ui_agent`): the page shows `run_task`'s steps live;
- tool-based generative UI (`tool_based_generative_ui_agent`): the page draws its
  `generate_haiku`;
- shared state (`shared_state_agent`): both sides edit one todo list and cart;
- predictive state updates (`predictive_state_updates_agent`): the page shows the document as
  the model writes it.

Each factory takes a `Model` or a model name ("openai:gpt-5-mini", "anthropic:...",
"ollama:llama3.2"); "demo" (the default) is the offline `DemoModel`, taught the phrases its page
suggests. `gallery_agents(model)` gives all seven by name for `create_app`; `pyox-agents demo`
serves them beside the demo agent, and the demo page's gallery has a page for each.
"""

from pyox_agents.examples._chat import AGENTIC_CHAT, agentic_chat_agent, chat_reply
from pyox_agents.examples._document import (
    PREDICTIVE_STATE_UPDATES,
    DocumentState,
    document_reply,
    predictive_state_updates_agent,
    undo_document,
    write_document,
)
from pyox_agents.examples._gallery import FEATURES, gallery_agents
from pyox_agents.examples._haiku import (
    TOOL_BASED_GENERATIVE_UI,
    haiku_reply,
    tool_based_generative_ui_agent,
)
from pyox_agents.examples._hitl import (
    HUMAN_IN_THE_LOOP,
    book_flight,
    hitl_reply,
    human_in_the_loop_agent,
)
from pyox_agents.examples._pace import Paced
from pyox_agents.examples._shared_state import SHARED_STATE, shared_state_agent
from pyox_agents.examples._steps import (
    AGENTIC_GENERATIVE_UI,
    PROGRESS_KIND,
    agentic_generative_ui_agent,
    steps_reply,
    task_tool,
)
from pyox_agents.examples._weather import (
    BACKEND_TOOL_RENDERING,
    backend_tool_rendering_agent,
    get_weather,
    weather_reply,
)

__all__ = [
    "AGENTIC_CHAT",
    "AGENTIC_GENERATIVE_UI",
    "BACKEND_TOOL_RENDERING",
    "FEATURES",
    "HUMAN_IN_THE_LOOP",
    "PREDICTIVE_STATE_UPDATES",
    "PROGRESS_KIND",
    "SHARED_STATE",
    "TOOL_BASED_GENERATIVE_UI",
    "DocumentState",
    "Paced",
    "agentic_chat_agent",
    "agentic_generative_ui_agent",
    "backend_tool_rendering_agent",
    "book_flight",
    "chat_reply",
    "document_reply",
    "gallery_agents",
    "get_weather",
    "haiku_reply",
    "hitl_reply",
    "human_in_the_loop_agent",
    "predictive_state_updates_agent",
    "shared_state_agent",
    "steps_reply",
    "task_tool",
    "tool_based_generative_ui_agent",
    "undo_document",
    "weather_reply",
    "write_document",
]
