// The CopilotKit view: CopilotKit v2 with our AG-UI endpoint as a local agent
// (`agents__unsafe_dev_only`, no CopilotKit runtime), its prebuilt <CopilotChat>, `useAgent`
// for the shared state, `useInterrupt` for the checkout approval and `useDefaultRenderTool` to
// show tool calls in the chat.
//
// The agent is the demo's ConnectingAgent: CopilotKit restores a thread (a reloaded page) with
// its `connect`, which streams the thread back from POST /agents/demo/ag-ui/connect: the
// messages under their ids, the state, and the approval a paused run waits for (useInterrupt
// shows it again). A message typed while the approval waits runs with the approval cancelled
// (`TypingOverAgent`): CopilotChat sends no `resume`, and @ag-ui/client refuses to run over an
// open interrupt otherwise; the server declines the call and answers the message. CopilotKit v2
// has no regenerate or edit of its own: the chat's `onRegenerate` and `onEditMessage` slots call
// the page's, which cut the agent's messages (an edit keeps the message's id) and run again.
// The board shows the thread's live state (shared/live.ts: clients/live-state's LiveThread),
// which `followAgent` keeps CopilotKit's agent in step with: the person's edits are edits of
// the thread, sent at once, run or no run, and every window on the thread shows every version.

import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import {
  CopilotChat,
  CopilotKit,
  useAgent,
  useCopilotKit,
  useDefaultRenderTool,
  useInterrupt,
  type AgentSubscriber,
  type Message,
  type RunAgentParameters,
  type RunAgentResult,
} from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import { AGENT, EMPTY } from "../shared/model";
import { ApprovalDialog, Board, ErrorBanner, LiveBar, StatePanel, ToolCallView } from "../shared/components";
import { NAMED_BUTTONS } from "../shared/chatInput";
import { ConnectingAgent } from "../shared/ConnectingAgent";
import { useBoard } from "../shared/useBoard";
import { eventVersion, followAgent, useBoardEdits, useLiveThread } from "../shared/live";
import { threadsChanged, titleThread } from "../shared/threads";

const VIEW = "copilotkit";

/** A ConnectingAgent that, asked to run over an open interrupt without answering it (the
 * person typed a message, or went back in the chat), sends the interrupt cancelled; that
 * runs once the person's edits still on their way are committed (`beforeRun`); and that says
 * when the thread has come back (`restoring`, then `onRestored`: CopilotKit's connect on load
 * has answered). */
class TypingOverAgent extends ConnectingAgent {
  beforeRun: (() => Promise<void> | undefined) | undefined;
  restoring = true;
  onRestored: (() => void) | undefined;

  connectAgent(parameters?: RunAgentParameters, subscriber?: AgentSubscriber): Promise<RunAgentResult> {
    return super.connectAgent(parameters, subscriber).finally(() => {
      if (!this.restoring) return;
      this.restoring = false;
      this.onRestored?.();
    });
  }

  runAgent(parameters?: RunAgentParameters, subscriber?: AgentSubscriber): Promise<RunAgentResult> {
    const waiting = this.beforeRun?.();
    if (waiting) return waiting.then(() => this.runOver(parameters, subscriber));
    return this.runOver(parameters, subscriber);
  }

  private runOver(parameters?: RunAgentParameters, subscriber?: AgentSubscriber): Promise<RunAgentResult> {
    const open = this.pendingInterrupts;
    if (open.length > 0 && !parameters?.resume) {
      parameters = { ...parameters, resume: open.map((i) => ({ interruptId: i.id, status: "cancelled" as const })) };
    }
    return super.runAgent(parameters, subscriber);
  }
}

/** `aside`: shown under the state (the thread's history). */
export function CopilotKitView({ threadId, linked = false, aside }: { threadId: string; linked?: boolean; aside?: ReactNode }) {
  const [error, setError] = useState<string | null>(null);
  const [agent] = useState(
    () => new TypingOverAgent({ url: new URL(`agents/${AGENT}/ag-ui`, location.href).toString(), threadId, initialState: EMPTY }),
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
      <CopilotKitBody threadId={threadId} linked={linked} error={error} setError={setError} aside={aside} />
    </CopilotKit>
  );
}

const text = (m: Message | undefined) => (m && typeof m.content === "string" ? m.content : "");

type BodyProps = { threadId: string; linked: boolean; error: string | null; setError: (e: string | null) => void; aside?: ReactNode };

function CopilotKitBody({ threadId, linked, error, setError, aside }: BodyProps) {
  const { agent } = useAgent({ agentId: AGENT });
  const { copilotkit } = useCopilotKit();
  const board = useBoard();
  const delta = useRef(false);
  // The thread as it is (or this page's own edit) shown as it is; a change highlighted.
  const live = useLiveThread(threadId, linked, (state, { own, first }) =>
    own || (first && !agent.isRunning) ? board.reset(state) : board.fromAgent(state));
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const restoring = () => agent instanceof TypingOverAgent && agent.restoring;
  const edits = useBoardEdits(live, board, restoring);
  useEffect(() => {
    board.reset(agent.state);
    const unfollow = followAgent(live.thread, agent);
    if (agent instanceof TypingOverAgent) {
      agent.beforeRun = () => (live.thread.pending > 0 ? live.settled() : undefined);
      agent.onRestored = () => edits.restored(agent);
    }
    const sub = agent.subscribe({
      onStateSnapshotEvent: ({ event }) => {
        board.log("STATE_SNAPSHOT", event.snapshot);
        if (eventVersion(event) !== null) live.follow(); // the thread is there: follow it
      },
      onStateDeltaEvent: ({ event }) => {
        delta.current = true;
        board.log("STATE_DELTA", event.delta);
      },
      // Until the thread has a version, the board shows the agent's state; then the thread's.
      // Highlight what a delta changed; a snapshot (a thread loaded, a run's start) is not news.
      onStateChanged: ({ state }) => {
        const shown = live.thread.version === null;
        if (shown && restoring()) edits.restore(state);
        else if (shown && delta.current) board.fromAgent(state);
        else if (shown) board.reset(state);
        delta.current = false;
      },
      onRunInitialized: () => board.cool(),
      onRunFinalized: () => threadsChanged(), // the list and the history show the run
      onRunErrorEvent: ({ event }) => {
        if (event.code !== "abort") setError(`The run failed: ${event.message}`);
      },
      onNewMessage: ({ message }) => {
        if (message.role === "user" && typeof message.content === "string") titleThread(VIEW, threadId, message.content);
      },
    });
    return () => {
      sub.unsubscribe();
      unfollow();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [agent]);

  // Tool calls in CopilotKit's chat, drawn like the other views draw them; a call an open
  // interrupt asks about waits for the person.
  const waits = (toolCallId: string) => agent.pendingInterrupts.some((i) => i.toolCallId === toolCallId);
  useDefaultRenderTool({
    render: ({ name, toolCallId, parameters, status, result }) => (
      <ToolCallView
        tool={{
          id: toolCallId,
          name,
          args: JSON.stringify(parameters ?? {}),
          status: status === "complete" ? (String(result).startsWith("denied") ? "denied" : "done") : waits(toolCallId) ? "waiting" : "running",
          result,
        }}
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

  // Going back in the chat: the agent's messages cut, then a run (the server branches there).
  const rerun = (messages: Message[]) => {
    agent.setMessages(messages);
    void copilotkit.runAgent({ agent });
  };
  const regenerate = (answer: Message) => {
    const messages = agent.messages;
    const at = messages.findIndex((m) => m.id === answer.id);
    let asked = at - 1;
    while (asked >= 0 && messages[asked].role !== "user") asked -= 1;
    if (asked >= 0) rerun(messages.slice(0, asked + 1));
  };
  const saveEdit = (e: FormEvent) => {
    e.preventDefault();
    const change = editing!;
    setEditing(null);
    const messages = agent.messages;
    const at = messages.findIndex((m) => m.id === change.id);
    if (at < 0 || !change.text.trim() || change.text.trim() === text(messages[at])) return;
    rerun([...messages.slice(0, at), { ...messages[at], content: change.text.trim() } as Message]);
  };

  return (
    <div className="view">
      <ErrorBanner error={error} onClose={() => setError(null)} />
      <div className="layout">
        <section className="card chat copilot" data-testid="chat">
          {editing && (
            <form className="edit-message" onSubmit={saveEdit} data-testid="edit-message">
              <input aria-label="Edited message" autoFocus value={editing.text} onChange={(e) => setEditing({ ...editing, text: e.target.value })} />
              <button type="submit" className="primary">Send</button>
              <button type="button" onClick={() => setEditing(null)}>Cancel</button>
            </form>
          )}
          <CopilotChat
            agentId={AGENT}
            threadId={threadId}
            labels={{ chatInputPlaceholder: "Ask the agent…" }}
            input={NAMED_BUTTONS}
            messageView={{
              assistantMessage: { onRegenerate: regenerate },
              userMessage: { onEditMessage: ({ message }) => setEditing({ id: message.id, text: text(message) }) },
            }}
          />
        </section>
        <div className="side">
          <LiveBar view={VIEW} threadId={threadId} running={agent.isRunning || Boolean(live.view?.running)} version={live.view?.version ?? null}
                   refused={live.refused} onDismiss={live.dismiss} />
          <Board state={board.state} hot={board.hot} onEdit={(change) => edits.edit(change, agent)} busy={agent.isRunning || Boolean(live.view?.running)} />
          <StatePanel state={board.state} patches={board.patches} />
          {aside}
        </div>
      </div>
      {approval}
    </div>
  );
}
