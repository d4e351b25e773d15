// The parts every view shares: the lists, the state panel, the chat, the approval dialog.

import { useEffect, useRef, useState, type FormEvent, type MouseEvent, type ReactNode } from "react";
import type { Approval, ChatItem, DemoState, Edit, PatchEntry } from "./model";
import { edits } from "./model";

function AddForm({ label, onAdd }: { label: string; onAdd: (text: string) => void }) {
  const [text, setText] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (text.trim()) onAdd(text.trim());
    setText("");
  };
  return (
    <form className="add" onSubmit={submit}>
      <input aria-label={label} placeholder={label} value={text} onChange={(e) => setText(e.target.value)} />
      <button type="submit">Add</button>
    </form>
  );
}

function TodoRow({ todo, hot, onEdit }: { todo: DemoState["todos"][number]; hot: boolean; onEdit: (e: Edit) => void }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(todo.text);
  const save = (e: FormEvent) => {
    e.preventDefault();
    setEditing(false);
    if (text.trim() && text.trim() !== todo.text) onEdit((s) => edits.editTodo(s, todo.id, text.trim()));
  };
  return (
    <li className={`row ${hot ? "hot" : ""} ${todo.done ? "done" : ""}`} data-testid="todo" data-id={todo.id}>
      <input
        type="checkbox"
        aria-label={`done: ${todo.text}`}
        checked={todo.done}
        onChange={() => onEdit((s) => edits.toggleTodo(s, todo.id))}
      />
      {editing ? (
        <form onSubmit={save} className="grow">
          <input autoFocus aria-label="todo text" value={text} onChange={(e) => setText(e.target.value)} onBlur={save} />
        </form>
      ) : (
        <span className="grow label" onDoubleClick={() => { setText(todo.text); setEditing(true); }}>
          {todo.text}
        </span>
      )}
      <button className="icon" title="Edit" onClick={() => { setText(todo.text); setEditing(true); }}>✎</button>
      <button className="icon" title="Remove" onClick={() => onEdit((s) => edits.removeTodo(s, todo.id))}>✕</button>
    </li>
  );
}

/** The todo list, the cart and the orders, editable by the person; `hot` ids are highlighted. */
export function Board({ state, hot, onEdit, busy }: { state: DemoState; hot: Set<string>; onEdit: (e: Edit) => void; busy: boolean }) {
  return (
    <div className={`board ${busy ? "busy" : ""}`}>
      <section className="card" data-testid="todos">
        <h2>Todos</h2>
        <ul>
          {state.todos.map((t) => (
            <TodoRow key={t.id} todo={t} hot={hot.has(t.id)} onEdit={onEdit} />
          ))}
          {state.todos.length === 0 && <li className="empty">Nothing to do.</li>}
        </ul>
        <AddForm label="New todo" onAdd={(text) => onEdit((s) => edits.addTodo(s, text))} />
      </section>
      <section className="card" data-testid="cart">
        <h2>Cart</h2>
        <ul>
          {state.cart.map((c) => (
            <li key={c.id} className={`row ${hot.has(c.id) ? "hot" : ""}`} data-testid="cart-item" data-id={c.id}>
              <span className="grow label">{c.name}</span>
              <input
                type="number"
                min={1}
                className="qty"
                aria-label={`quantity of ${c.name}`}
                value={c.qty}
                onChange={(e) => onEdit((s) => edits.setQty(s, c.id, Number(e.target.value) || 1))}
              />
              <button className="icon" title="Remove" onClick={() => onEdit((s) => edits.removeCartItem(s, c.id))}>✕</button>
            </li>
          ))}
          {state.cart.length === 0 && <li className="empty">The cart is empty.</li>}
        </ul>
        <AddForm label="New cart item" onAdd={(name) => onEdit((s) => edits.addCartItem(s, name))} />
      </section>
      <section className="card" data-testid="orders">
        <h2>Orders</h2>
        <ul>
          {state.orders.map((o) => (
            <li key={o.id} className={`row order ${hot.has(o.id) ? "hot" : ""}`} data-testid="order" data-id={o.id}>
              <span className="badge">{o.status}</span>
              <span className="grow">
                #{o.id}: {o.items.map((i) => `${i.qty} × ${i.name}`).join(", ")}
              </span>
            </li>
          ))}
          {state.orders.length === 0 && <li className="empty">No orders yet.</li>}
        </ul>
      </section>
    </div>
  );
}

/** Opens the link in a window of its own (beside this one, both in sight), not a tab. */
function openWindow(event: MouseEvent<HTMLAnchorElement>) {
  if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return; // the browser's own
  event.preventDefault();
  const width = Math.max(480, Math.round(window.outerWidth / 2));
  window.open(event.currentTarget.href, "_blank", `noopener,width=${width},height=${window.outerHeight}`);
}

/** Above the board: whether the agent works on the thread (in this window or another), the
 * link that opens the thread in a second window (it follows the thread live there too), and
 * why the server refused the person's last edit, if it did. */
export function LiveBar({ view, threadId, running, version, refused, onDismiss }: {
  view: string; threadId: string; running: boolean; version: number | null; refused: string | null; onDismiss: () => void;
}) {
  return (
    <div className="live-bar">
      <div className="row">
        <span className="grow muted" data-testid="live-status" data-version={version ?? ""} data-running={running}>
          {running ? "The agent is working: your edits apply at once." : version === null ? "A new thread." : "Live: every window shows each change."}
        </span>
        <a href={`#${view}/${encodeURIComponent(threadId)}`} target="_blank" rel="noopener" data-testid="second-window"
           title="The same thread in a new window, following every change live" onClick={openWindow}>
          Open in a second window
        </a>
      </div>
      {refused && (
        <div className="refused" role="status" data-testid="refused">
          <span className="grow">{refused}</span>
          <button className="icon" onClick={onDismiss} title="Dismiss">✕</button>
        </div>
      )}
    </div>
  );
}

/** The state as JSON and the log of patches, folded away until asked for. */
export function StatePanel({ state, patches }: { state: unknown; patches: PatchEntry[] }) {
  return (
    <details className="card state-panel" data-testid="state-panel">
      <summary>State (JSON) and patch log ({patches.length})</summary>
      <div className="cols" tabIndex={0} aria-label="The state and its patches">
        <pre data-testid="state-json">{JSON.stringify(state, null, 2)}</pre>
        <ol className="patches">
          {patches.map((p, i) => (
            <li key={i}>
              <span className="muted">{p.at} {p.source}</span>
              <pre>{JSON.stringify(p.ops)}</pre>
            </li>
          ))}
        </ol>
      </div>
    </details>
  );
}

/** A pending approval: Approve or Deny. It does not block the page: the person may type a
 * message instead, which declines it (the server's rule), and the agent answers the message. */
export function ApprovalDialog({ approval, onAnswer, cart }: { approval: Approval; onAnswer: (approved: boolean) => void; cart?: DemoState["cart"] }) {
  return (
    <div className="dialog-dock">
      <div className="dialog" role="dialog" aria-label="Approve the order" data-testid="approval">
        <h3>The agent wants to run {approval.tool}</h3>
        <p>{approval.message}</p>
        {approval.tool === "checkout" && cart ? (
          <p data-testid="approval-order">
            Order: {cart.map((c) => `${c.qty} × ${c.name}`).join(", ") || "(the cart is empty)"}
          </p>
        ) : (
          <pre>{JSON.stringify(approval.args)}</pre>
        )}
        <div className="actions">
          <button className="primary" onClick={() => onAnswer(true)}>Approve</button>
          <button onClick={() => onAnswer(false)}>Deny</button>
        </div>
        <p className="muted hint">Or type a message instead: the agent is not allowed, and answers it.</p>
      </div>
    </div>
  );
}

export function ErrorBanner({ error, onClose }: { error: string | null; onClose: () => void }) {
  if (!error) return null;
  return (
    <div className="error" role="alert" data-testid="error">
      <span className="grow">{error}</span>
      <button className="icon" onClick={onClose} title="Dismiss">✕</button>
    </div>
  );
}

export function ToolCallView({ tool }: { tool: ChatItem["tools"][number] }) {
  return (
    <div className={`tool ${tool.status}`} data-testid="tool-call">
      <span className="tool-name">tool {tool.name}</span> <code>{tool.args}</code>
      <span className="tool-status"> {tool.status === "running" ? "running…" : tool.status}</span>
      {tool.result !== undefined && <div className="tool-result">{tool.result}</div>}
    </div>
  );
}

/** The conversation, the input and the stop button. */
export function ChatPanel({ items, running, onSend, onStop, header }: { items: ChatItem[]; running: boolean; onSend: (text: string) => void; onStop: () => void; header?: ReactNode }) {
  const [text, setText] = useState("");
  const list = useRef<HTMLDivElement>(null);
  useEffect(() => {
    list.current?.scrollTo({ top: list.current.scrollHeight });
  }, [items, running]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim() || running) return;
    onSend(text.trim());
    setText("");
  };
  return (
    <section className="card chat" data-testid="chat">
      {header}
      <div className="messages" ref={list} tabIndex={0} aria-label="The conversation">
        {items.length === 0 && <p className="muted">Try: “add milk and eggs to my cart”, “clear completed”, “check out”.</p>}
        {items.map((m) => (
          <div key={m.id} className={`msg ${m.role}`} data-testid={`msg-${m.role}`}>
            {m.tools.map((t) => (
              <ToolCallView key={t.id} tool={t} />
            ))}
            {m.text && <div className="text">{m.text}</div>}
            {m.extra}
          </div>
        ))}
        {running && <div className="muted" data-testid="running">The agent is working…</div>}
      </div>
      <form className="composer" onSubmit={submit}>
        <input aria-label="Message" placeholder="Ask the agent…" value={text} onChange={(e) => setText(e.target.value)} />
        {running ? (
          <button type="button" onClick={onStop} data-testid="stop">Stop</button>
        ) : (
          <button type="submit" className="primary">Send</button>
        )}
      </form>
    </section>
  );
}
