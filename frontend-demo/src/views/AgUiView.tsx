// The AG-UI view: @ag-ui/client's HttpAgent against POST /agents/demo/ag-ui.
// State comes from STATE_SNAPSHOT / STATE_DELTA; an approval is a RUN_FINISHED interrupt,
// answered by the next run's `resume`.

import { useEffect, useMemo, useRef, useState } from "react";
import { HttpAgent, type Message } from "@ag-ui/client";
import { AGENT, EMPTY, type Approval, type ChatItem, type Edit } from "../shared/model";
import { ApprovalDialog, Board, ChatPanel, ErrorBanner, StatePanel } from "../shared/components";
import { useBoard } from "../shared/useBoard";
import { loadThread, stopRun, titleThread, type ThreadMessage } from "../shared/threads";

const VIEW = "ag-ui";

/** The server's thread messages as AG-UI messages (so the next run carries the history). */
export function toAgUiMessages(messages: ThreadMessage[]): Message[] {
  return messages.flatMap((m, i): Message[] => {
    const id = `h${i}`;
    if (m.role === "user") return [{ id, role: "user", content: m.content }];
    if (m.role === "assistant")
      return [{
        id,
        role: "assistant",
        content: m.content,
        ...(m.tool_calls.length
          ? { toolCalls: m.tool_calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) }
          : {}),
      }];
    if (m.role === "tool") return [{ id, role: "tool", content: m.content, toolCallId: m.call_id ?? "" }];
    return [];
  });
}

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
      const status = r ? (r.error ? (r.content.includes("denied") ? "denied" : "error") : "done") : waiting.has(c.id) ? "waiting" : "running";
      return { id: c.id, name: c.function.name, args: c.function.arguments, status, result: r?.content } as ChatItem["tools"][number];
    });
    return [{ id: m.id, role: "assistant", text: typeof m.content === "string" ? m.content : "", tools }];
  });
}

type Interrupt = { id: string; message?: string; toolCallId?: string; metadata?: { tool?: string; arguments?: unknown } };

export function AgUiView({ threadId }: { threadId: string }) {
  const board = useBoard();
  const [messages, setMessages] = useState<Message[]>([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [interrupt, setInterrupt] = useState<Interrupt | null>(null);
  const agentRef = useRef<HttpAgent | null>(null);

  useEffect(() => {
    let live = true;
    // Always a whole state: the server then records where the thread starts from.
    const agent = new HttpAgent({ url: new URL(`agents/${AGENT}/ag-ui`, location.href).toString(), threadId, initialState: EMPTY });
    agentRef.current = agent;
    const sub = agent.subscribe({
      onStateSnapshotEvent: ({ event }) => board.log("STATE_SNAPSHOT", event.snapshot),
      onStateDeltaEvent: ({ event }) => board.log("STATE_DELTA", event.delta),
      onStateChanged: ({ state }) => board.fromAgent(state),
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
    loadThread(threadId)
      .then((thread) => {
        if (!live || !thread) return;
        board.reset(thread.state); // first: a loaded thread is not highlighted as the agent's change
        agent.setMessages(toAgUiMessages(thread.messages));
        agent.setState(thread.state as Record<string, unknown>);
        setMessages([...agent.messages]);
      })
      .catch((e) => live && setError(String(e.message ?? e)));
    return () => {
      live = false;
      sub.unsubscribe();
      agent.abortRun();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [threadId]);

  const run = async (params?: Parameters<HttpAgent["runAgent"]>[0]) => {
    const agent = agentRef.current!;
    board.cool();
    setRunning(true);
    setError(null);
    try {
      await agent.runAgent(params);
    } catch (e) {
      const err = e as Error;
      if (err.name !== "AbortError") setError(`The run failed: ${err.message ?? String(e)}`);
    } finally {
      setRunning(false);
    }
  };

  const send = (text: string) => {
    titleThread(VIEW, threadId, text);
    agentRef.current!.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
    void run();
  };

  const answer = (approved: boolean) => {
    const open = interrupt!;
    setInterrupt(null);
    void run({ resume: [{ interruptId: open.id, status: "resolved", payload: { approved } }] });
  };

  const edit = (change: Edit) => {
    const next = change(board.current.current);
    agentRef.current?.setState(next);
    board.reset(next);
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
          <Board state={board.state} hot={board.hot} onEdit={edit} busy={running} />
          <StatePanel state={board.state} patches={board.patches} />
        </div>
      </div>
      {approval && <ApprovalDialog approval={approval} onAnswer={answer} cart={board.state.cart} />}
    </div>
  );
}
