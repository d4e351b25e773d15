// The CopilotKit view: CopilotKit v2 with our AG-UI endpoint as a local agent
// (`agents__unsafe_dev_only`, no CopilotKit runtime), its prebuilt <CopilotChat>, `useAgent`
// for the shared state, `useInterrupt` for the checkout approval and `useDefaultRenderTool` to
// show tool calls in the chat.
//
// CopilotKit restores a thread by calling the agent's `connect` (it first empties the agent's
// messages and state). `HttpAgent` has no `connect` and our server no connect endpoint, so
// `ThreadAgent` implements it from GET /threads/{id}: a MESSAGES_SNAPSHOT and a STATE_SNAPSHOT.

import { useEffect, useRef, useState } from "react";
import { Observable } from "rxjs";
import {
  CopilotChat,
  CopilotKit,
  EventType,
  HttpAgent,
  useAgent,
  useDefaultRenderTool,
  useInterrupt,
  type BaseEvent,
  type RunAgentInput,
} from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import { AGENT, EMPTY, normalize, type Edit } from "../shared/model";
import { ApprovalDialog, Board, ErrorBanner, StatePanel, ToolCallView } from "../shared/components";
import { useBoard } from "../shared/useBoard";
import { loadThread, titleThread } from "../shared/threads";
import { toAgUiMessages } from "./AgUiView";

const VIEW = "copilotkit";

/** An HttpAgent whose `connect` loads the thread the server keeps. */
class ThreadAgent extends HttpAgent {
  protected connect(input: RunAgentInput): Observable<BaseEvent> {
    return new Observable<BaseEvent>((out) => {
      const { threadId, runId } = input;
      loadThread(threadId).then(
        (thread) => {
          out.next({ type: EventType.RUN_STARTED, threadId, runId } as BaseEvent);
          out.next({ type: EventType.MESSAGES_SNAPSHOT, messages: toAgUiMessages(thread?.messages ?? []) } as BaseEvent);
          // Always a whole state: the server then records where a new thread starts from.
          out.next({ type: EventType.STATE_SNAPSHOT, snapshot: normalize(thread?.state) } as BaseEvent);
          out.next({ type: EventType.RUN_FINISHED, threadId, runId } as BaseEvent);
          out.complete();
        },
        (error) => out.error(error),
      );
    });
  }
}

export function CopilotKitView({ threadId }: { threadId: string }) {
  const [error, setError] = useState<string | null>(null);
  const [agent] = useState(
    () => new ThreadAgent({ url: new URL(`agents/${AGENT}/ag-ui`, location.href).toString(), threadId, initialState: EMPTY }),
  );
  return (
    <CopilotKit
      agents__unsafe_dev_only={{ [AGENT]: agent }}
      agentId={AGENT}
      threadId={threadId}
      enableInspector={false}
      showDevConsole={false}
      onError={(e) => setError(`CopilotKit: ${e.error?.message ?? String(e)}`)}
    >
      <CopilotKitBody threadId={threadId} error={error} setError={setError} />
    </CopilotKit>
  );
}

function CopilotKitBody({ threadId, error, setError }: { threadId: string; error: string | null; setError: (e: string | null) => void }) {
  const { agent } = useAgent({ agentId: AGENT });
  const board = useBoard();
  const delta = useRef(false);
  useEffect(() => {
    board.reset(agent.state);
    const sub = agent.subscribe({
      onStateSnapshotEvent: ({ event }) => board.log("STATE_SNAPSHOT", event.snapshot),
      onStateDeltaEvent: ({ event }) => {
        delta.current = true;
        board.log("STATE_DELTA", event.delta);
      },
      // Highlight what a delta changed; a snapshot (a thread loaded, a run's start) is not news.
      onStateChanged: ({ state }) => {
        if (delta.current) board.fromAgent(state);
        else board.reset(state);
        delta.current = false;
      },
      onRunInitialized: () => board.cool(),
      onRunErrorEvent: ({ event }) => {
        if (event.code !== "abort") setError(`The run failed: ${event.message}`);
      },
      onNewMessage: ({ message }) => {
        if (message.role === "user" && typeof message.content === "string") titleThread(VIEW, threadId, message.content);
      },
    });
    return () => sub.unsubscribe();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [agent]);

  // Tool calls in CopilotKit's chat, drawn like the other views draw them.
  useDefaultRenderTool({
    render: ({ name, toolCallId, parameters, status, result }) => (
      <ToolCallView
        tool={{ id: toolCallId, name, args: JSON.stringify(parameters ?? {}), status: status === "complete" ? "done" : "running", result }}
      />
    ),
  });

  const approval = useInterrupt({
    agentId: AGENT,
    renderInChat: false,
    render: ({ interrupt, resolve }) => {
      const meta = (interrupt?.metadata ?? {}) as { tool?: string; arguments?: unknown };
      return (
        <ApprovalDialog
          approval={{ tool: meta.tool ?? "a tool", args: meta.arguments ?? {}, message: interrupt?.message ?? "Approve?" }}
          onAnswer={(approved) => resolve({ approved })}
          cart={board.current.current.cart}
        />
      );
    },
  });

  const edit = (change: Edit) => {
    const next = change(board.current.current);
    agent.setState(next);
    board.reset(next);
  };

  return (
    <div className="view">
      <ErrorBanner error={error} onClose={() => setError(null)} />
      <div className="layout">
        <section className="card chat copilot" data-testid="chat">
          <CopilotChat agentId={AGENT} threadId={threadId} labels={{ chatInputPlaceholder: "Ask the agent…" }} />
        </section>
        <div className="side">
          <Board state={board.state} hot={board.hot} onEdit={edit} busy={agent.isRunning} />
          <StatePanel state={board.state} patches={board.patches} />
        </div>
      </div>
      {approval}
    </div>
  );
}
