// The AG-UI view: @ag-ui/client's HttpAgent against POST /agents/demo/ag-ui.
// State comes from STATE_SNAPSHOT / STATE_DELTA; an approval is a RUN_FINISHED interrupt,
// answered by the next run's `resume`. A message typed while it waits runs with the interrupt
// cancelled (the client refuses to run over an open interrupt otherwise): the server declines
// the call and answers the message. The thread comes back on a page load through
// POST /agents/demo/ag-ui/connect: its messages under their ids, its state, and the approval a
// paused run still waits for.
// The board shows the thread's live state (shared/live.ts: clients/live-state's LiveThread),
// which `followAgent` keeps the agent in step with: the person's edits are edits of the thread,
// sent at once, run or no run, and every window on the thread shows every version.

import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { HttpAgent, runHttpRequest, transformHttpEventStream, type Message } from "@ag-ui/client";
import { connectingAgent } from "../../../clients/live-state/index.js";
import { AGENT, EMPTY, type Approval, type ChatItem } from "../shared/model";
import { ApprovalDialog, Board, ChatPanel, ErrorBanner, LiveBar, StatePanel } from "../shared/components";
import { useBoard } from "../shared/useBoard";
import { eventVersion, followAgent, useBoardEdits, useLiveThread } from "../shared/live";
import { stopRun, threadsChanged, titleThread } from "../shared/threads";

const VIEW = "ag-ui";

/** clients/live-state's ConnectingAgent on @ag-ui/client 1.0: `connectAgent()` streams the
 * thread back from `<url>/connect`. */
const ThreadAgent = connectingAgent(HttpAgent, { runHttpRequest, transformHttpEventStream });

/** AG-UI messages as chat items: tool calls with their results, in order. */
export function agUiChatItems(messages: Message[], waiting: Set<string>): ChatItem[] {
  const results = new Map<string, { content: string; error: boolean }>();
  for (const m of messages) {
    if (m.role === "tool") results.set(m.toolCallId, { content: String(m.content), error: Boolean(m.error) });
  }
  return messages.flatMap((m): ChatItem[] => {
    if (m.role === "user") return [{ id: m.id, role: "user", text: typeof m.content === "string" ? m.content : "", tools: [] }];
    if (m.role !== "assistant") return [];
    const tools = (m.toolCalls ?? []).map((c) => {
      const r = results.get(c.id);
      const status = r ? (r.content.startsWith("denied") ? "denied" : r.error ? "error" : "done") : waiting.has(c.id) ? "waiting" : "running";
      return { id: c.id, name: c.function.name, args: c.function.arguments, status, result: r?.content } as ChatItem["tools"][number];
    });
    return [{ id: m.id, role: "assistant", text: typeof m.content === "string" ? m.content : "", tools }];
  });
}

type Interrupt = { id: string; message?: string; toolCallId?: string; metadata?: { tool?: string; arguments?: unknown } };

/** `aside`: shown under the state (the thread's history). */
export function AgUiView({ threadId, linked = false, aside }: { threadId: string; linked?: boolean; aside?: ReactNode }) {
  const board = useBoard();
  const ownRun = useRef(false);
  // The thread as it is (or this page's own edit) shown as it is; a change highlighted.
  const live = useLiveThread(threadId, linked, (state, { own, first }) =>
    own || (first && !ownRun.current) ? board.reset(state) : board.fromAgent(state));
  const [messages, setMessages] = useState<Message[]>([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [interrupt, setInterrupt] = useState<Interrupt | null>(null);
  const agentRef = useRef<InstanceType<typeof ThreadAgent> | null>(null);
  const restoring = useRef(true); // the thread coming back: not the agent's change, no highlight
  const edits = useBoardEdits(live, board, () => restoring.current);

  useEffect(() => {
    let mounted = true;
    // Always a whole state: the server then records where the thread starts from.
    const agent = new ThreadAgent({ url: new URL(`agents/${AGENT}/ag-ui`, location.href).toString(), threadId, initialState: EMPTY });
    agentRef.current = agent;
    const unfollow = followAgent(live.thread, agent);
    const sub = agent.subscribe({
      onStateSnapshotEvent: ({ event }) => {
        board.log("STATE_SNAPSHOT", event.snapshot);
        if (eventVersion(event) !== null) live.follow(); // the thread is there: follow it
      },
      onStateDeltaEvent: ({ event }) => board.log("STATE_DELTA", event.delta),
      // Until the thread has a version, the board shows the agent's state; then the thread's.
      onStateChanged: ({ state }) => {
        if (live.thread.version !== null) return;
        if (restoring.current) edits.restore(state);
        else board.fromAgent(state);
      },
      onMessagesChanged: ({ messages }) => setMessages([...messages]),
      onRunFinishedEvent: ({ event }) => {
        const outcome = (event as { outcome?: { type: string; interrupts?: Interrupt[] } }).outcome;
        if (outcome?.type === "interrupt" && outcome.interrupts?.length) setInterrupt(outcome.interrupts[0]);
      },
      onRunErrorEvent: ({ event }) => {
        if (event.code !== "abort") setError(`The run failed: ${event.message}`);
      },
    });
    board.reset({});
    setMessages([]);
    setInterrupt(null);
    restoring.current = true;
    edits.forget();
    agent
      .connectAgent()
      .catch((e) => mounted && setError(`Loading the thread failed: ${String(e.message ?? e)}`))
      .finally(() => {
        restoring.current = false;
        if (mounted) edits.restored(agent);
      });
    return () => {
      mounted = false;
      sub.unsubscribe();
      unfollow();
      agent.abortRun();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [threadId]);

  const run = async (params?: Parameters<HttpAgent["runAgent"]>[0]) => {
    const agent = agentRef.current!;
    board.cool();
    setRunning(true);
    ownRun.current = true;
    setError(null);
    try {
      await live.settled(); // the person's last edits first: the run starts from them
      await agent.runAgent(params);
    } catch (e) {
      const err = e as Error;
      if (err.name !== "AbortError") setError(`The run failed: ${err.message ?? String(e)}`);
    } finally {
      setRunning(false);
      ownRun.current = false;
      threadsChanged(); // the list and the history show the run
    }
  };

  const send = (text: string) => {
    titleThread(VIEW, threadId, text);
    agentRef.current!.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
    const open = interrupt; // typed instead of an answer: the approval is cancelled with it
    setInterrupt(null);
    void run(open ? { resume: [{ interruptId: open.id, status: "cancelled" }] } : undefined);
  };

  const answer = (approved: boolean) => {
    const open = interrupt!;
    setInterrupt(null);
    void run({ resume: [{ interruptId: open.id, status: "resolved", payload: { approved } }] });
  };

  const stop = () => {
    agentRef.current?.abortRun();
    stopRun(AGENT, threadId).catch((e) => setError(String(e.message ?? e)));
  };

  const waiting = useMemo(() => new Set(interrupt?.toolCallId ? [interrupt.toolCallId] : []), [interrupt]);
  const approval: Approval | null = interrupt
    ? { tool: interrupt.metadata?.tool ?? "a tool", args: interrupt.metadata?.arguments ?? {}, message: interrupt.message ?? "Approve?" }
    : null;

  return (
    <div className="view">
      <ErrorBanner error={error} onClose={() => setError(null)} />
      <div className="layout">
        <ChatPanel items={agUiChatItems(messages, waiting)} running={running} onSend={send} onStop={stop} />
        <div className="side">
          <LiveBar view={VIEW} threadId={threadId} running={running || Boolean(live.view?.running)} version={live.view?.version ?? null}
                   refused={live.refused} onDismiss={live.dismiss} />
          <Board state={board.state} hot={board.hot} onEdit={(change) => edits.edit(change, agentRef.current)} busy={running || Boolean(live.view?.running)} />
          <StatePanel state={board.state} patches={board.patches} />
          {aside}
        </div>
      </div>
      {approval && <ApprovalDialog approval={approval} onAnswer={answer} cart={board.state.cart} />}
    </div>
  );
}
