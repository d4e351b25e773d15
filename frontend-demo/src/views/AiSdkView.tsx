// The AI SDK view: useChat + DefaultChatTransport against POST /agents/demo/ai-sdk.
// The chat's history comes from GET /agents/demo/ai-sdk/{id}/messages (UIMessage[], ready for
// useChat); the board shows the thread's live state (shared/live.ts: clients/live-state's
// LiveThread), every version from runs and from other windows, and the person's edits are
// edits of the thread, sent at once, run or no run. A request carries only the latest state
// part (`stripOldStateParts`), naming the thread's latest version (`atVersion`), so it does not
// grow with the state times the turns. Before the thread's first run, the state is kept from
// the stream's `data-state` snapshots and `data-state-delta` patches (liveState.ts) and the
// person's edits go with the first request as its `state`. An approval is a tool part
// in state "approval-requested"; `resume: true` picks up a run that was streaming when the page
// was reloaded, into the same message. A message typed while an approval waits is sent at once
// (the server declines the approval and answers it); the passed-over approval shows as denied.
// Under a message: its sources, a tool's live progress, and its metadata (model, tokens, cost).

import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { AGENT, EMPTY, type Approval, type ChatItem, type DemoState, type Edit } from "../shared/model";
import { ApprovalDialog, Board, ChatPanel, ErrorBanner, LiveBar, StatePanel } from "../shared/components";
import { useBoard } from "../shared/useBoard";
import { atVersion, lastState, nextState } from "../shared/liveState";
import { stripOldStateParts, useLiveThread } from "../shared/live";
import { notStarted, responseError, stopRun, threadsChanged, titleThread } from "../shared/threads";

const VIEW = "ai-sdk";

/** The chat as the server keeps it (UIMessage[]), or [] for a chat it does not know yet. */
export async function loadMessages(chatId: string): Promise<UIMessage[]> {
  const response = await fetch(`agents/${AGENT}/ai-sdk/${encodeURIComponent(chatId)}/messages`);
  if (response.status === 404) return [];
  if (!response.ok) throw await responseError(response, `loading chat ${chatId}`);
  return (await response.json()) as UIMessage[];
}

type Metadata = { model?: string; usage?: { inputTokens: number; outputTokens: number }; cost?: number };

/** What a message shows under its text: sources, a tool's live progress, its metadata. */
function extras(m: UIMessage): ReactNode {
  const parts = m.parts as { type: string; url?: string; title?: string; data?: unknown }[];
  const sources = parts.filter((p) => p.type === "source-url");
  const progress = parts.filter((p) => p.type === "data-search").map((p) => p.data as { dish: string; looking_in: string; done: number; of: number });
  const meta = m.metadata as Metadata | undefined;
  return (
    <>
      {progress.map((p, i) => (
        <div key={i} className="progress" data-testid="progress">
          {p.done < p.of ? `Looking in ${p.looking_in} for ${p.dish} (${p.done}/${p.of})…` : `Looked in ${p.of} places for ${p.dish}.`}
        </div>
      ))}
      {sources.length > 0 && (
        <div className="sources">
          {sources.map((p) => (
            <a key={p.url} href={p.url} target="_blank" rel="noreferrer" data-testid="source">{p.title ?? p.url}</a>
          ))}
        </div>
      )}
      {meta?.usage && (
        <div className="meta" data-testid="meta">
          {meta.model} · {meta.usage.inputTokens} in / {meta.usage.outputTokens} out tokens · ${(meta.cost ?? 0).toFixed(4)}
        </div>
      )}
    </>
  );
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
  return messages.map((m, at) => {
    const later = at < messages.length - 1; // a message came after it: an approval still asked was passed over
    const text = m.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
    const tools = (m.parts as ToolPart[])
      .filter((p) => p.type.startsWith("tool-"))
      .map((p) => ({
        id: p.toolCallId,
        name: p.type.slice(5),
        args: JSON.stringify(p.input ?? {}),
        status: (p.state === "output-available" ? "done" : p.state === "output-error" ? "error" : p.state === "output-denied" ? "denied"
          : p.state === "approval-requested" && later ? "denied" : p.state.startsWith("approval") ? "waiting" : "running") as ChatItem["tools"][number]["status"],
        result: p.state === "output-available" ? (typeof p.output === "string" ? p.output : JSON.stringify(p.output)) : p.errorText,
      }));
    return { id: m.id, role: m.role === "user" ? "user" : "assistant", text, tools, extra: m.role === "assistant" ? extras(m) : undefined };
  });
}

/** `aside`: shown under the state (the thread's history). */
export function AiSdkView({ threadId, linked = false, aside }: { threadId: string; linked?: boolean; aside?: ReactNode }) {
  const [messages, setMessages] = useState<UIMessage[] | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setMessages(undefined);
    (notStarted(VIEW, threadId) ? Promise.resolve([]) : loadMessages(threadId)) // (a new chat: nothing to ask)
      .then((m) => live && setMessages(m))
      .catch((e) => {
        if (!live) return;
        setError(String(e.message ?? e));
        setMessages([]);
      });
    return () => {
      live = false;
    };
  }, [threadId]);
  if (messages === undefined) return <div className="view muted">Loading the thread…</div>;
  return <AiSdkChat key={threadId} threadId={threadId} initial={messages} loadError={error} follow={linked || messages.length > 0} aside={aside} />;
}

type ChatProps = { threadId: string; initial: UIMessage[]; loadError: string | null; follow: boolean; aside?: ReactNode };

function AiSdkChat({ threadId, initial, loadError, follow, aside }: ChatProps) {
  const board = useBoard();
  const sending = useRef(false);
  // The thread as it is (or this page's own edit) shown as it is; a change highlighted.
  const live = useLiveThread(threadId, follow, (state, { own, first }) =>
    own || (first && !sending.current) ? board.reset(state) : board.fromAgent(state));
  const thread = live.thread;
  const settled = live.settled;
  const [error, setError] = useState<string | null>(loadError);
  const streamed = useRef<unknown>(lastState<unknown>(initial, EMPTY)); // the state as the stream sent it
  const stateRef = useRef<DemoState>(board.current.current);
  useEffect(() => {
    board.reset(streamed.current);
    stateRef.current = board.current.current;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: `agents/${AGENT}/ai-sdk`,
        prepareSendMessagesRequest: async ({ id, messages, body, trigger, messageId }) => {
          await settled(); // the person's last edits first: the run starts from them
          const sent = stripOldStateParts(messages);
          const state = thread.version === null
            ? { messages: sent, state: stateRef.current } // no version yet: the page's state starts the thread
            : atVersion(sent, thread.version, thread.server.state);
          return { body: { ...body, id, trigger, messageId, ...state } };
        },
      }),
    [thread, settled],
  );
  const chat = useChat({
    id: threadId,
    messages: initial,
    transport,
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onData: (part) => {
      if (part.type === "data-state-version") live.follow(); // the thread is there: follow it
      if (part.type !== "data-state" && part.type !== "data-state-delta") return;
      board.log(part.type, part.data);
      streamed.current = nextState(streamed.current, part);
      if (thread.version !== null) return; // the board shows the thread's versions
      board.fromAgent(structuredClone(streamed.current));
      stateRef.current = board.current.current;
    },
    onError: (e) => setError(`The run failed: ${e.message}`),
    onFinish: () => threadsChanged(), // the list and the history show the run
  });

  const running = chat.status === "submitted" || chat.status === "streaming";
  sending.current = running;
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
    if (live.edit(change)) return;
    // A thread not started yet: the edit goes with its first request.
    const next = change(board.current.current);
    board.reset(next);
    stateRef.current = next;
    streamed.current = next;
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
          <LiveBar view={VIEW} threadId={threadId} running={running || Boolean(live.view?.running)} version={live.view?.version ?? null}
                   refused={live.refused} onDismiss={live.dismiss} />
          <Board state={board.state} hot={board.hot} onEdit={edit} busy={running || Boolean(live.view?.running)} />
          <StatePanel state={board.state} patches={board.patches} />
          {aside}
        </div>
      </div>
      {approval && pending?.approval && <ApprovalDialog approval={approval} onAnswer={answer} cart={board.state.cart} />}
    </div>
  );
}
