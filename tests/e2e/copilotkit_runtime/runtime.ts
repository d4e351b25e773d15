// copilotkit.ts: the CopilotKit runtime (Node) in front of the pyox-agents server, which keeps
// the threads.
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";
import { PyoxAgentRunner } from "@pyox-agents/copilotkit-runtime";

// Where the pyox-agents server listens (`uvicorn app:app`); only this process calls it.
const PYOX_AGENTS_URL = process.env.PYOX_AGENTS_URL ?? "http://127.0.0.1:8000";

// Runs, reloads (connect), stops and the thread list go to the server: nothing of a thread is
// kept in this process, so a restarted runtime, or another one, gives a page its thread back.
const runner = new PyoxAgentRunner({ url: PYOX_AGENTS_URL });

export const runtime = new CopilotRuntime({
  agents: {
    // One entry per agent of create_app({...}): the key is the agentId the page names.
    todo: new HttpAgent({ url: runner.agentUrl("todo") }),
  },
  runner,
});

// A Node (req, res) listener for the routes `<CopilotKit runtimeUrl="/api/copilotkit">` calls.
export const copilotkit = createCopilotNodeListener({
  runtime,
  basePath: "/api/copilotkit",
  hooks: runner.hooks(), // stop and the thread list, as the page's person (its Authorization)
  activateChannels: false, // no CopilotKit Intelligence channels: nothing opens a socket
});
