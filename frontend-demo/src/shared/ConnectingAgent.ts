// ConnectingAgent: an AG-UI HttpAgent that can come back to a thread.
//
// CopilotKit restores a thread (a reloaded page, <CopilotChat threadId=...>) with
// `agent.connectAgent()`, which calls the agent's `connect(input)`; `HttpAgent` has none. This
// one POSTs the thread's RunAgentInput to `<run url>/connect` (pyox-agents serves
// `POST /agents/{name}/ag-ui/connect`) and reads the answer like a run: RUN_STARTED, the
// thread's messages (MESSAGES_SNAPSHOT, under the ids they were streamed with), its state
// (STATE_SNAPSHOT), the live tail of a run still going, RUN_FINISHED.
//
//   const agent = new ConnectingAgent({ url: "/agents/assistant/ag-ui", threadId });
//   <CopilotKit agents__unsafe_dev_only={{ assistant: agent }} ...>
//
// Works with @ag-ui/client 1.0.0 and 0.0.59 (the one CopilotKit 1.74 bundles): this file takes
// HttpAgent from CopilotKit, so the agent is the class CopilotKit expects; with plain
// @ag-ui/client, import the same three names from "@ag-ui/client" instead.

import type { Observable } from "rxjs";
import {
  HttpAgent,
  runHttpRequest,
  transformHttpEventStream,
  type BaseEvent,
  type RunAgentInput,
} from "@copilotkit/react-core/v2";

/** An HttpAgent whose `connect` streams the thread back from `<url>/connect`. */
export class ConnectingAgent extends HttpAgent {
  /** Where `connect` posts: the run URL with `/connect` added to its path. */
  protected connectUrl(): string {
    const [path, query] = this.url.split("?", 2);
    return `${path.replace(/\/+$/, "")}/connect${query === undefined ? "" : `?${query}`}`;
  }

  /** The thread's history, state and live tail, as events (called by `connectAgent`). */
  protected connect(input: RunAgentInput): Observable<BaseEvent> {
    const response = () => this.fetch(this.connectUrl(), this.requestInit(input));
    return transformHttpEventStream(runHttpRequest(response));
  }
}
