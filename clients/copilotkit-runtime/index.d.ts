// @pyox-agents/copilotkit-runtime: CopilotKit's Node runtime in front of a pyox-agents server
// that keeps the threads. See README.md.
import type { BaseEvent } from "@ag-ui/client";
import type {
  AgentRunner,
  AgentRunnerConnectRequest,
  AgentRunnerIsRunningRequest,
  AgentRunnerRunRequest,
  AgentRunnerStopRequest,
  CopilotRuntimeHooks,
} from "@copilotkit/runtime/v2";
import type { Observable } from "rxjs";

export interface PyoxAgentRunnerOptions {
  /** Where the pyox-agents server (`create_app(...)`) listens, e.g. "http://127.0.0.1:8000". */
  url: string;
  /**
   * The server's agent name for a runtime agent id, where they differ (`{ support: "todo" }`).
   * By default the runtime's agent ids are the server's names (the keys of `create_app`'s
   * mapping): `/agents/{agentId}/ag-ui`.
   */
  agents?: Record<string, string>;
  /**
   * The headers of the runner's own calls, made with no page behind them: `isRunning`, and a
   * `stop` the runtime calls without `hooks()` (a server with `auth=` needs a credential here).
   * Runs and connects carry what the runtime forwards from the page instead.
   */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /**
   * The page's request headers `hooks()` forwards to the server with a stop or a thread-list
   * request (lowercase names). Default: `["authorization"]`.
   */
  forwardHeaders?: string[];
}

/**
 * An `AgentRunner` for `new CopilotRuntime({ agents, runner })` that makes the pyox-agents
 * server the truth of the runtime's threads:
 *
 * - `run` runs the agent the runtime gives it (its `HttpAgent` on the AG-UI endpoint, with the
 *   headers the runtime forwards from the page) and streams its events; a page that goes away
 *   leaves the run going (as the runtime's own runner does), and a stop ends it;
 * - `connect` streams the server's `POST /agents/{name}/ag-ui/connect`: the thread's messages,
 *   its shared state, the run going on (replayed, then live, whichever process started it) or a
 *   paused run's approval. Nothing is kept in the runtime's memory, so a restarted runtime, or
 *   another process, gives a reloaded page its thread back;
 * - `isRunning` reads `GET /threads/{id}` (`running`);
 * - `stop` calls the agent's stop route for a thread this runner ran or connected.
 *
 * Give the runtime's handler `hooks()` too: the runtime passes `stop` no caller, and serves
 * no thread list for a runner of its own; the hooks serve both as the page's person.
 */
export declare class PyoxAgentRunner implements AgentRunner {
  constructor(options: PyoxAgentRunnerOptions);
  /** The AG-UI endpoint of the runtime's agent `agentId` on the server. */
  agentUrl(agentId: string): string;
  run(request: AgentRunnerRunRequest): Observable<BaseEvent>;
  connect(request: AgentRunnerConnectRequest): Observable<BaseEvent>;
  isRunning(request: AgentRunnerIsRunningRequest): Promise<boolean>;
  /**
   * Stops the thread's run on the server (its record: stopped; what it committed stays), or,
   * given a `runId`, only the run its request started; false when no run was going, the run
   * going is another (the `runId`'s has ended), or this runner never ran or connected the
   * thread (it does not know its agent). The runtime's stop route reaches the server through
   * `hooks()` instead, as the page's person.
   */
  stop(request: AgentRunnerStopRequest): Promise<boolean>;
  /**
   * Hooks for the runtime's handler (`createCopilotNodeListener({ runtime, hooks })`, or any
   * `createCopilotRuntimeHandler`) that serve, with the page's `Authorization` (see
   * `forwardHeaders`):
   *
   * - `POST .../agent/{agentId}/stop/{threadId}` (CopilotKit's stop button): the server's stop
   *   of the run its `runId` names, answered as the runtime's own stop route answers;
   * - `GET .../threads` (`useThreads`): the person's threads on the server (`GET /threads`),
   *   newest change first, paged (`limit`, `cursor`), as CopilotKit's `Thread` records; the
   *   archived ones too with `includeArchived=true` (the server's `?archived=any`);
   * - `PATCH .../threads/{id}` (rename, unarchive), `POST .../threads/{id}/archive`,
   *   `DELETE .../threads/{id}`: the server's `PATCH` / `DELETE /threads/{id}`;
   *
   * and mark `/info`'s `threadEndpoints` `{list: true, mutations: true}` so that `useThreads`
   * uses them. `own` hooks run first (an `onBeforeHandler` that throws a `Response` still
   * refuses the request).
   */
  hooks(own?: CopilotRuntimeHooks): CopilotRuntimeHooks;
}
