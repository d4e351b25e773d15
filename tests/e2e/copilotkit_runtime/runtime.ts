// copilotkit.ts: the CopilotKit runtime (Node) in front of the pyox-agents server.
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

// Where the pyox-agents server listens (`uvicorn app:app`); only this process calls it.
const PYOX_AGENTS_URL = process.env.PYOX_AGENTS_URL ?? "http://127.0.0.1:8000";

export const runtime = new CopilotRuntime({
  agents: {
    // One entry per agent of create_app({...}): the key is the agentId the page names.
    todo: new HttpAgent({ url: `${PYOX_AGENTS_URL}/agents/todo/ag-ui` }),
  },
});

// A Node (req, res) listener for the routes `<CopilotKit runtimeUrl="/api/copilotkit">` calls.
export const copilotkit = createCopilotNodeListener({
  runtime,
  basePath: "/api/copilotkit",
  activateChannels: false, // no CopilotKit Intelligence channels: nothing opens a socket
});
