// A view's threads: the server's (GET /threads, the caller's own, newest change first), and the
// few this browser knows that the server does not have yet, kept in localStorage: a thread the
// page made and has not sent a message in, and one opened from a link. Rename, delete, a run's
// history, fork and rewind go to the server's threads API (docs/guides/threads.md).
//
// Each view keeps its own threads apart by their ids, `<view>-<uuid>`: the three views talk to
// one agent ("demo"), so an agent would not tell them apart, and a view cannot open another's
// thread (an AG-UI thread has no AI SDK messages the AI SDK view could load). The page names
// every thread it makes, a fork too (POST /threads/{id}/fork takes the new id), so a fork stays
// in its view; the gallery's threads, and any other client's, are not listed.

/** A thread of the list. `onServer`: GET /threads listed it. `started: false`: this browser
 * made it and sent nothing in it yet (the server has none of it: nothing to ask for); absent
 * for one opened from a link. `run`: "running" or "paused" (waits for a person), as listed. */
export type ThreadInfo = { id: string; title: string; created: number; started?: boolean; onServer?: boolean; run?: string | null };

/** The server's answer for one thread of GET /threads. */
type Listed = { id: string; title: string | null; created_at: string | null; updated_at: string | null; run: string | null };

const NEW_TITLE = "New thread";
const key = (view: string) => `pyox-demo:${view}:threads`;
const currentKey = (view: string) => `pyox-demo:${view}:current`;
/** How the views tell the page that a thread changed on the server (a run started or ended). */
const CHANGED = "pyox-demo:threads-changed";

/** The threads only this browser knows (see the module's comment). */
function localThreads(view: string): ThreadInfo[] {
  try {
    const value = JSON.parse(localStorage.getItem(key(view)) ?? "[]");
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

function saveLocal(view: string, threads: ThreadInfo[]): void {
  localStorage.setItem(key(view), JSON.stringify(threads));
}

export function newThread(view: string): ThreadInfo {
  const info = { id: `${view}-${crypto.randomUUID()}`, title: NEW_TITLE, created: Date.now(), started: false };
  saveLocal(view, [info, ...localThreads(view)]);
  setCurrent(view, info.id);
  return info;
}

/** The thread the view showed last (kept over a reload), else a new one. */
export function currentThread(view: string): string {
  return localStorage.getItem(currentKey(view)) ?? localThreads(view)[0]?.id ?? newThread(view).id;
}

/** Thread `id`, opened from a link (another window's "Open in a second window"), made the
 * current one and kept in the list until the server lists it. */
export function adoptThread(view: string, id: string): void {
  if (!localThreads(view).some((t) => t.id === id)) {
    saveLocal(view, [{ id, title: NEW_TITLE, created: Date.now() }, ...localThreads(view)]);
  }
  setCurrent(view, id);
}

export function setCurrent(view: string, id: string): void {
  localStorage.setItem(currentKey(view), id);
}

/** The person sent `text` in thread `id`: the server has the thread from now on. A new thread
 * is named after it until the server lists it (under its own title). */
export function titleThread(view: string, id: string, text: string): void {
  const threads = localThreads(view);
  const thread = threads.find((t) => t.id === id);
  if (thread && thread.started !== true) {
    if (thread.title === NEW_TITLE) thread.title = text.length > 40 ? text.slice(0, 39) + "…" : text;
    thread.started = true;
    saveLocal(view, threads);
  }
  threadsChanged();
}

/** Whether this browser made thread `id` and sent nothing in it yet (the server has none of it). */
export function notStarted(view: string, id: string): boolean {
  return localThreads(view).find((t) => t.id === id)?.started === false;
}

/** Tell the page a thread changed on the server (its list and history are read again). */
export function threadsChanged(): void {
  window.dispatchEvent(new Event(CHANGED));
}

/** Call `listener` whenever a view says a thread changed; returns the unsubscribe. */
export function onThreadsChanged(listener: () => void): () => void {
  window.addEventListener(CHANGED, listener);
  return () => window.removeEventListener(CHANGED, listener);
}

/** Threads deleted from this page: not listed again by a list read while the delete was on its way. */
const deleted = new Set<string>();

/** The view's threads: the ones only this browser knows (the newest first), then the server's
 * (GET /threads: those whose id is the view's, the newest change first). A local one the
 * server lists is dropped from localStorage; so is one sent in but not listed (deleted
 * elsewhere), unless it is `current` (its first run may not have reached the server yet). */
export async function fetchThreads(view: string, current: string): Promise<ThreadInfo[]> {
  const response = await fetch("threads?limit=200");
  if (!response.ok) throw await responseError(response, "listing the threads");
  const listed = ((await response.json()) as { threads: Listed[] }).threads
    .filter((t) => (t.id.startsWith(`${view}-`) || t.id === current) && !deleted.has(t.id));
  const ids = new Set(listed.map((t) => t.id));
  const local = localThreads(view).filter((t) =>
    !ids.has(t.id) && !deleted.has(t.id) && (t.started === false || t.id === current));
  saveLocal(view, local);
  const server = listed.map((t): ThreadInfo => ({
    id: t.id, title: t.title ?? NEW_TITLE, created: Date.parse(t.created_at ?? "") || 0, onServer: true, run: t.run,
  }));
  return [...local, ...server];
}

/** JSON from the threads API, or an Error with the server's own message. */
async function call<T>(method: string, path: string, what: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? undefined : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await responseError(response, what);
  return (await response.json()) as T;
}

const path = (id: string, tail = "") => `threads/${encodeURIComponent(id)}${tail}`;

/** Rename thread `id` (`""`: back to the start of its first message). */
export async function renameThread(view: string, thread: ThreadInfo, title: string): Promise<void> {
  if (!thread.onServer) {
    saveLocal(view, localThreads(view).map((t) => (t.id === thread.id ? { ...t, title: title || NEW_TITLE } : t)));
    return;
  }
  await call("PATCH", path(thread.id), "renaming the thread", { title });
}

/** Delete thread `id` and everything the server keeps of it (a thread only this browser knew
 * is only forgotten). */
export async function deleteThread(view: string, thread: ThreadInfo): Promise<void> {
  deleted.add(thread.id);
  if (thread.onServer || thread.started !== false) {
    await call("DELETE", path(thread.id), "deleting the thread").catch((e: Error) => {
      if (!thread.onServer) return; // (a thread sent in, never listed: the server may not have it)
      deleted.delete(thread.id); // still there: list it again
      throw e;
    });
  }
  saveLocal(view, localThreads(view).filter((t) => t.id !== thread.id));
}

/** A run of a thread's history (GET /threads/{id}/history): `asked`, the text of the message it
 * answered (on a branch too). */
export type HistoryRun = { run_id: string; started_at: string; answers: string | null; asked: string | null; status: string | null; version: number | null; current: boolean };

/** Thread `id`'s runs, oldest first. */
export async function loadHistory(id: string): Promise<HistoryRun[]> {
  const history = await call<{ runs: HistoryRun[] }>("GET", path(id, "/history"), "loading the thread's history");
  return history.runs;
}

/** A new thread of the view, as thread `id` (titled `title`) was right after run `runId`,
 * titled after it; its id and title. */
export async function forkThread(view: string, id: string, runId: string, title: string): Promise<{ id: string; title: string }> {
  const forked = await call<{ id: string }>("POST", path(id, "/fork"), "forking the thread",
    { run_id: runId, thread_id: `${view}-${crypto.randomUUID()}` });
  const named = `${title.slice(0, 73)} (fork)`;
  const ok = await call("PATCH", path(forked.id), "naming the fork", { title: named }).then(() => true, () => false);
  return { id: forked.id, title: ok ? named : title }; // (unnamed, it is still the fork: open it)
}

/** Thread `id` back to right after run `runId`: its conversation and its shared state. */
export async function rewindThread(id: string, runId: string): Promise<void> {
  await call("POST", path(id, "/rewind"), "rewinding the thread", { run_id: runId });
}

/** Say what went wrong in a response, with the server's own message. */
export async function responseError(response: Response, what: string): Promise<Error> {
  let detail = await response.text();
  try {
    const body = JSON.parse(detail);
    if (body && typeof body.error === "string") detail = body.error;
  } catch {
    // plain text: keep it
  }
  return new Error(`${what}: HTTP ${response.status}: ${detail || response.statusText}`);
}

/** Ask the server to cancel the thread's run (the client's abort only closes its connection). */
export async function stopRun(agent: string, threadId: string): Promise<void> {
  const response = await fetch(`agents/${agent}/ai-sdk/${encodeURIComponent(threadId)}/stop`, {
    method: "POST",
  });
  if (!response.ok) throw await responseError(response, "stopping the run");
}
