// The page on the AI SDK: `useChat` on the agent's AI SDK endpoint, each tool call drawn in the
// chat, an approval asked by the agent (a tool part in state "approval-requested"), and the
// todo list, which is the thread's shared state. The chat's id is the thread's.
//
// After a reload the chat's messages come from the server (GET .../messages), and a run still
// going is picked up (`resume`). Once the server has the thread, the list is the thread's live
// state and a hand edit is sent to it at once; before (a new thread), the list is the page's
// own and goes with the first message as the thread's start. A thread the server has shows no
// list until its state is in (an edit of a list the person has not seen would undo theirs).

import { useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { applyOps, diffState, stripOldStateParts, type Operation } from "./live-state/index.js";
import { Board, EMPTY, type BoardState } from "./Board";
import { Frame } from "./Frame";
import { useLive } from "./live";
import { AGENT, SERVER } from "./thread";

const API = `${SERVER}/agents/${AGENT}/ai-sdk`;

export function App({ threadId, started }: { threadId: string; started: boolean }) {
  const [messages, setMessages] = useState<UIMessage[] | null>(started ? null : []);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!started) return;
    fetch(`${API}/${encodeURIComponent(threadId)}/messages`)
      .then(async (response) => {
        if (response.status === 404) return [];
        if (!response.ok) throw new Error(`loading the thread: ${response.status} ${await response.text()}`);
        return (await response.json()) as UIMessage[];
      })
      .then(setMessages)
      .catch((e: Error) => {
        setError(e.message);
        setMessages([]);
      });
  }, [threadId, started]);
  if (messages === null) return <p className="muted">Loading the thread…</p>;
  return <Chat threadId={threadId} started={started} initial={messages} loadError={error} />;
}

type ToolPart = { type: string; toolCallId: string; state: string; input?: unknown; output?: unknown; errorText?: string; approval?: { id: string } };

function Chat({ threadId, started, initial, loadError }: { threadId: string; started: boolean; initial: UIMessage[]; loadError: string | null }) {
  const live = useLive(threadId, started);
  const [own, setOwn] = useState<BoardState>(EMPTY); // the list before the server has the thread
  const ownRef = useRef(own);
  ownRef.current = own;
  const [error, setError] = useState(loadError);

  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: API,
        // Only the last state part goes back (the server reads no other); a new thread's list
        // goes with its first message.
        prepareSendMessagesRequest: ({ id, messages, body, trigger, messageId }) => ({
          body: {
            ...body, id, trigger, messageId, messages: stripOldStateParts(messages),
            ...(live.thread.version === null ? { state: ownRef.current } : {}),
          },
        }),
      }),
    [live.thread],
  );
  const chat = useChat({
    id: threadId,
    messages: initial,
    transport,
    resume: started,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onData: (part) => {
      if (part.type === "data-state-version") live.follow(); // the server has the thread now
      else if (part.type === "data-state") setOwn(part.data as BoardState);
      else if (part.type === "data-state-delta") setOwn((state) => applyOps(state, part.data as Operation[]));
    },
    onError: (e) => setError(`The run failed: ${e.message}`),
  });

  const running = chat.status === "submitted" || chat.status === "streaming";
  const state = live.view?.state ?? (started ? null : own);
  const edit = (next: BoardState) => {
    if (live.thread.version === null) setOwn(next);
    else void live.thread.edit(diffState(live.thread.state, next));
  };
  const waiting = (chat.messages.at(-1)?.parts as ToolPart[] | undefined)?.find((p) => p.state === "approval-requested" && p.approval);

  return (
    <Frame running={running || Boolean(live.view?.running)} version={live.view?.version ?? null} refused={live.refused ?? error}
           onDismiss={() => { live.dismiss(); setError(null); }}>
      <section className="chat" data-testid="chat">
        {chat.messages.map((m) => <MessageView key={m.id} message={m} />)}
        {waiting && (
          <div className="approval" role="dialog" aria-label="Approval">
            Allow {waiting.type.slice("tool-".length)}?
            <div>
              <button type="button" className="primary" onClick={() => void chat.addToolApprovalResponse({ id: waiting.approval!.id, approved: true })}>Approve</button>
              <button type="button" onClick={() => void chat.addToolApprovalResponse({ id: waiting.approval!.id, approved: false })}>Deny</button>
            </div>
          </div>
        )}
        <MessageInput running={running} onSend={(text) => void chat.sendMessage({ text })} onStop={() => stop(threadId, chat.stop)} />
      </section>
      {state === null ? <p className="muted">Loading the list…</p> : <Board state={state} onChange={edit} />}
    </Frame>
  );
}

/** Stop the run: `chat.stop()` only closes this page's stream (the run would go on), so the
 * server is told to stop it too. */
function stop(threadId: string, close: () => Promise<void>): void {
  void close();
  void fetch(`${API}/${encodeURIComponent(threadId)}/stop`, { method: "POST" });
}

function MessageView({ message }: { message: UIMessage }) {
  return (
    <div className={`message ${message.role}`} data-role={message.role}>
      {(message.parts as ToolPart[]).map((part, i) => {
        if (part.type === "text") return <p key={i}>{(part as unknown as { text: string }).text}</p>;
        if (!part.type.startsWith("tool-")) return null; // the state parts: the list shows them
        const result = part.state === "output-available" ? JSON.stringify(part.output) : part.state === "output-error" ? part.errorText : part.state;
        return (
          <div key={i} className="tool" data-testid="tool-call">
            <strong>{part.type.slice("tool-".length)}</strong> <code>{JSON.stringify(part.input ?? {})}</code> → {result}
          </div>
        );
      })}
    </div>
  );
}

function MessageInput({ running, onSend, onStop }: { running: boolean; onSend: (text: string) => void; onStop: () => void }) {
  const [text, setText] = useState("");
  const send = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim()) return;
    onSend(text.trim());
    setText("");
  };
  return (
    <form className="send" onSubmit={send}>
      <input aria-label="Message" placeholder="Ask the agent…" value={text} onChange={(e) => setText(e.target.value)} />
      {running ? <button type="button" onClick={onStop}>Stop</button> : <button type="submit" className="primary">Send</button>}
    </form>
  );
}
