// The view's threads beside it: pick one, start one, and rename or delete the current one
// (through the server's threads API: the change is the server's, every page sees it).

import { useEffect, useState, type FormEvent } from "react";
import type { ThreadInfo } from "./threads";

type Props = {
  threads: ThreadInfo[];
  current: string;
  error: string | null;
  onSelect: (id: string) => void;
  onNew: () => void;
  onRename: (thread: ThreadInfo, title: string) => void;
  onDelete: (thread: ThreadInfo) => void;
};

export function ThreadList({ threads, current, error, onSelect, onNew, onRename, onDelete }: Props) {
  return (
    <nav className="threads" data-testid="threads" aria-label="Threads">
      <button onClick={onNew}>+ New thread</button>
      {error && <p className="threads-error" role="alert" data-testid="threads-error">{error}</p>}
      <ul>
        {threads.map((t) => (
          <ThreadRow key={t.id} thread={t} current={t.id === current} onSelect={onSelect} onRename={onRename} onDelete={onDelete} />
        ))}
      </ul>
    </nav>
  );
}

type RowProps = { thread: ThreadInfo; current: boolean } & Pick<Props, "onSelect" | "onRename" | "onDelete">;

/** A thread: its title (a button that opens it); the current one also has Rename and Delete,
 * each asking first, in place (no browser dialog). */
function ThreadRow({ thread, current, onSelect, onRename, onDelete }: RowProps) {
  const [mode, setMode] = useState<"show" | "rename" | "delete">("show");
  const [title, setTitle] = useState(thread.title);
  useEffect(() => {
    if (!current) setMode("show"); // a rename or a delete left half-asked ends when another thread opens
  }, [current]);
  const rename = (e: FormEvent) => {
    e.preventDefault();
    setMode("show");
    if (title.trim() !== thread.title) onRename(thread, title.trim());
  };
  if (current && mode === "rename") {
    return (
      <li className="thread current" data-testid="thread" data-id={thread.id}>
        <form className="thread-form" onSubmit={rename}>
          <input autoFocus aria-label="Thread title" maxLength={80} value={title} onChange={(e) => setTitle(e.target.value)} />
          <button type="submit" className="primary">Save</button>
          <button type="button" onClick={() => setMode("show")}>Cancel</button>
        </form>
      </li>
    );
  }
  if (current && mode === "delete") {
    return (
      <li className="thread current" data-testid="thread" data-id={thread.id}>
        <div className="thread-form" role="group" aria-label="Delete the thread?">
          <span className="grow">Delete “{thread.title}” and all of it?</span>
          <button className="danger" onClick={() => { setMode("show"); onDelete(thread); }}>Delete</button>
          <button onClick={() => setMode("show")}>Keep</button>
        </div>
      </li>
    );
  }
  return (
    <li className={`thread ${current ? "current" : ""}`} data-testid="thread" data-id={thread.id}>
      <button className="thread-title" onClick={() => onSelect(thread.id)} title={thread.id} aria-current={current ? "page" : undefined}>
        {thread.title}
        {thread.run && <span className="thread-run"> · {thread.run === "paused" ? "waits for you" : "running"}</span>}
      </button>
      {current && (
        <>
          <button className="icon" title="Rename" aria-label="Rename the thread" onClick={() => { setTitle(thread.title); setMode("rename"); }}>✎</button>
          <button className="icon" title="Delete" aria-label="Delete the thread" onClick={() => setMode("delete")}>✕</button>
        </>
      )}
    </li>
  );
}
