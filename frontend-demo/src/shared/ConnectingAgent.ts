// ConnectingAgent: an AG-UI HttpAgent that can come back to a thread (clients/live-state's
// `connectingAgent`), built on CopilotKit's copy of @ag-ui/client, so the agent is the class
// CopilotKit expects. CopilotKit restores a thread (a reloaded page, <CopilotChat threadId=...>)
// with `agent.connectAgent()`; pyox-agents serves the thread back from
// `POST /agents/{name}/ag-ui/connect`.
//
//   const agent = new ConnectingAgent({ url: "/agents/assistant/ag-ui", threadId });
//   <CopilotKit agents__unsafe_dev_only={{ assistant: agent }} ...>

import { HttpAgent, runHttpRequest, transformHttpEventStream } from "@copilotkit/react-core/v2";
import { connectingAgent } from "../../../clients/live-state/index.js";

export const ConnectingAgent = connectingAgent(HttpAgent, { runHttpRequest, transformHttpEventStream });
