// The AI SDK view: useChat + DefaultChatTransport against POST /agents/demo/ai-sdk.
// State comes from the `data-state` part (onData); the person's edits travel as the body's
// `state`; an approval is a tool part in state "approval-requested"; `resume: true` picks up
// a run that was streaming when the page was reloaded.

import { useEffect, useMemo, useRef, useState } from "react";
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { AGENT, type Approval, type ChatItem, type DemoState, type Edit } from "../shared/model";
import { ApprovalDialog, Board, ChatPanel, ErrorBanner, StatePanel } from "../shared/components";
import { useBoard } from "../shared/useBoard";
import { loadThread, stopRun, titleThread, type ThreadRecord } from "../shared/threads";

const VIEW = "ai-sdk";

/** The server's thread messages as UIMessages: tool calls become tool parts with their output. */
export function toUiMessages(thread: ThreadRecord): UIMessage[] {
  const results = new Map(thread.messages.filter((m) => m.role === "tool").map((m) => [m.call_id, m.content]));
  const out: UIMessage[] = [];
  thread.messages.forEach((m, i) => {
    if (m.role === "user") out.push({ id: `h${i}`, role: "user", parts: [{ type: "text", text: m.content }] });
    if (m.role !== "assistant") return;
    const parts: UIMessage["parts"] = m.tool_calls.map((c) => ({
      type: `tool-${c.name}` as `tool-${string}`,
      toolCallId: c.id,
      state: "output-available" as const,
      input: c.arguments,
      output: results.get(c.id) ?? "",
    }));
    if (m.content) parts.push({ type: "text", text: m.content });
    const last = out[out.length - 1];
    if (last?.role === "assistant") last.parts.push(...parts); // one UI message per turn
    else out.push({ id: `h${i}`, role: "assistant", parts });
  });
  return out;
}

type ToolPart = {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  approval?: { id: string; approved?: boolean };
};

function chatItems(messages: UIMessage[]): ChatItem[] {
  return messages.map((m) => {
    const text = m.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
    const tools = (m.parts as ToolPart[])
      .filter((p) => p.type.startsWith("tool-"))
      .map((p) => ({
        id: p.toolCallId,
        name: p.type.slice(5),
        args: JSON.stringify(p.input ?? {}),
        status: (p.state === "output-available" ? "done" : p.state === "output-error" ? "error" : p.state === "output-denied" ? "denied"
          : p.state.startsWith("approval") ? "waiting" : "running") as ChatItem["tools"][number]["status"],
        result: p.state === "output-available" ? (typeof p.output === "string" ? p.output : JSON.stringify(p.output)) : p.errorText,
      }));
    return { id: m.id, role: m.role === "user" ? "user" : "assistant", text, tools };
  });
}

export function AiSdkView({ threadId }: { threadId: string }) {
  const [thread, setThread] = useState<ThreadRecord | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setThread(undefined);
    loadThread(threadId)
      .then((t) => live && setThread(t))
      .catch((e) => {
        if (!live) return;
        setError(String(e.message ?? e));
        setThread(null);
      });
    return () => {
      live = false;
    };
  }, [threadId]);
  if (thread === undefined) return <div className="view muted">Loading the thread…</div>;
  return <AiSdkChat key={threadId} threadId={threadId} thread={thread} loadError={error} />;
}

function AiSdkChat({ threadId, thread, loadError }: { threadId: string; thread: ThreadRecord | null; loadError: string | null }) {
  const board = useBoard();
  const [error, setError] = useState<string | null>(loadError);
  const stateRef = useRef<DemoState>(board.current.current);
  useEffect(() => {
    if (thread) board.reset(thread.state);
    stateRef.current = board.current.current;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const transport = useMemo(
    () => new DefaultChatTransport({ api: `agents/${AGENT}/ai-sdk`, body: () => ({ state: stateRef.current }) }),
    [],
  );
  const initial = useMemo(() => (thread ? toUiMessages(thread) : []), [thread]);
  const chat = useChat({
    id: threadId,
    messages: initial,
    transport,
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onData: (part) => {
      if (part.type === "data-state") {
        board.log("data-state", part.data);
        board.fromAgent(structuredClone(part.data));
        stateRef.current = board.current.current;
      } else if (part.type === "data-state-delta") {
        board.log("data-state-delta", part.data);
      }
    },
    onError: (e) => setError(`The run failed: ${e.message}`),
  });

  const running = chat.status === "submitted" || chat.status === "streaming";
  const pending = (chat.messages.at(-1)?.parts as ToolPart[] | undefined)?.find((p) => p.type.startsWith("tool-") && p.state === "approval-requested");
  const approval: Approval | null = pending
    ? { tool: pending.type.slice(5), args: pending.input ?? {}, message: `Allow ${pending.type.slice(5)}? It places the order.` }
    : null;

  const send = (text: string) => {
    titleThread(VIEW, threadId, text);
    board.cool();
    setError(null);
    void chat.sendMessage({ text });
  };
  const answer = (approved: boolean) => {
    board.cool();
    void chat.addToolApprovalResponse({ id: pending!.approval!.id, approved });
  };
  const edit = (change: Edit) => {
    const next = change(board.current.current);
    board.reset(next);
    stateRef.current = next;
  };
  const stop = () => {
    void chat.stop();
    stopRun(AGENT, threadId).catch((e) => setError(String(e.message ?? e)));
  };

  return (
    <div className="view">
      <ErrorBanner error={error} onClose={() => setError(null)} />
      <div className="layout">
        <ChatPanel items={chatItems(chat.messages)} running={running} onSend={send} onStop={stop} />
        <div className="side">
          <Board state={board.state} hot={board.hot} onEdit={edit} busy={running} />
          <StatePanel state={board.state} patches={board.patches} />
        </div>
      </div>
      {approval && pending?.approval && <ApprovalDialog approval={approval} onAnswer={answer} cart={board.state.cart} />}
    </div>
  );
}
