// The page on CopilotKit v2: its chat (`CopilotChat`), each tool call drawn in it
// (`useDefaultRenderTool`), an approval asked by the agent (`useInterrupt`), and the todo list,
// which is the thread's shared state. CopilotKit calls the agent's AG-UI endpoint directly
// (`agents__unsafe_dev_only`: no CopilotKit runtime, no key); with `enableInspector={false}`
// and `showDevConsole={false}` it asks no other host for anything.
//
// The agent is an HttpAgent that can come back to a thread (`connectingAgent`): after a reload,
// CopilotKit asks the server for the thread's messages, its state and an approval still waiting.
// Once the server has the thread, the list the page shows is the thread's live state and a hand
// edit goes to the server at once; `followAgent` keeps the agent's state in step with it (a run
// starts from the thread's latest version). Before (a new thread), the list is the agent's state
// and goes with the first message as the thread's start. A thread the server has shows no list
// until its state is in: CopilotKit empties the agent's state while it connects, and an edit of
// that empty list would be an edit of a list the person has not seen.

import { useEffect, useState } from "react";
import {
  CopilotChat,
  CopilotKit,
  HttpAgent,
  runHttpRequest,
  transformHttpEventStream,
  useAgent,
  useDefaultRenderTool,
  useInterrupt,
  type AgentSubscriber,
  type RunAgentParameters,
  type RunAgentResult,
} from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import { connectingAgent, diffState, followAgent } from "./live-state/index.js";
import { Board, EMPTY, type BoardState } from "./Board";
import { Frame } from "./Frame";
import { useLive, versionOf } from "./live";
import { AGENT, SERVER } from "./thread";

/** Names for the chat's icon buttons, for screen readers. */
const NAMED_BUTTONS = { sendButton: { "aria-label": "Send" }, addMenuButton: { "aria-label": "Add a file or a tool" } };

const ConnectingAgent = connectingAgent(HttpAgent, { runHttpRequest, transformHttpEventStream });

/** A message typed while an approval waits declines the approval (the server then answers the
 * message): CopilotChat sends no answer to it, and an agent refuses to run over it otherwise. */
class TodoAgent extends ConnectingAgent {
  runAgent(parameters?: RunAgentParameters, subscriber?: AgentSubscriber): Promise<RunAgentResult> {
    const open = this.pendingInterrupts;
    if (open.length > 0 && !parameters?.resume) {
      parameters = { ...parameters, resume: open.map((i) => ({ interruptId: i.id, status: "cancelled" as const })) };
    }
    return super.runAgent(parameters, subscriber);
  }
}

export function App({ threadId, started }: { threadId: string; started: boolean }) {
  const [agent] = useState(() => new TodoAgent({ url: `${SERVER}/agents/${AGENT}/ag-ui`, threadId, initialState: EMPTY }));
  return (
    <CopilotKit agents__unsafe_dev_only={{ [AGENT]: agent }} agentId={AGENT} threadId={threadId} enableInspector={false} showDevConsole={false}>
      <Page threadId={threadId} started={started} />
    </CopilotKit>
  );
}

function Page({ threadId, started }: { threadId: string; started: boolean }) {
  const { agent } = useAgent({ agentId: AGENT });
  const live = useLive(threadId, started);
  useEffect(() => {
    const unfollow = followAgent(live.thread, agent);
    // A state with a version: the server has the thread now, so its feed can be followed.
    const subscription = agent.subscribe({
      onStateSnapshotEvent: ({ event }) => {
        if (versionOf(event) !== null) live.follow();
      },
    });
    return () => {
      subscription.unsubscribe();
      unfollow();
    };
  }, [agent, live.thread, live.follow]);

  useDefaultRenderTool();
  useInterrupt({
    agentId: AGENT,
    render: ({ interrupt, resolve }) => (
      <div className="approval" role="dialog" aria-label="Approval">
        {interrupt?.message ?? "Allow this?"}
        <div>
          <button type="button" className="primary" onClick={() => resolve({ approved: true })}>Approve</button>
          <button type="button" onClick={() => resolve({ approved: false })}>Deny</button>
        </div>
      </div>
    ),
  });

  const state = live.view?.state ?? (started ? null : { ...EMPTY, ...(agent.state as BoardState) });
  const edit = (next: BoardState) => {
    if (live.thread.version === null) agent.setState(next);
    else void live.thread.edit(diffState(live.thread.state, next));
  };
  return (
    <Frame running={agent.isRunning} version={live.view?.version ?? null} refused={live.refused} onDismiss={live.dismiss}>
      <section className="chat" data-testid="chat">
        <CopilotChat agentId={AGENT} threadId={threadId} labels={{ chatInputPlaceholder: "Ask the agent…" }} input={NAMED_BUTTONS} />
      </section>
      {state === null ? <p className="muted">Loading the list…</p> : <Board state={state} onChange={edit} />}
    </Frame>
  );
}
