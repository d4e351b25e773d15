// Threads kept by the browser (ids in localStorage); each view loads a thread back its own way.

/** `started: false`: a thread this browser made and has not sent a message in yet, which the
 * server does not know (nothing to load); unknown (absent) for a thread opened from a link. */
export type ThreadInfo = { id: string; title: string; created: number; started?: boolean };

const key = (view: string) => `pyox-demo:${view}:threads`;
const currentKey = (view: string) => `pyox-demo:${view}:current`;

export function listThreads(view: string): ThreadInfo[] {
  try {
    const value = JSON.parse(localStorage.getItem(key(view)) ?? "[]");
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

function saveThreads(view: string, threads: ThreadInfo[]): void {
  localStorage.setItem(key(view), JSON.stringify(threads));
}

export function newThread(view: string): ThreadInfo {
  const info = { id: `${view}-${crypto.randomUUID()}`, title: "New thread", created: Date.now(), started: false };
  saveThreads(view, [info, ...listThreads(view)]);
  setCurrent(view, info.id);
  return info;
}

export function currentThread(view: string): ThreadInfo {
  const id = localStorage.getItem(currentKey(view));
  const found = listThreads(view).find((t) => t.id === id);
  return found ?? listThreads(view)[0] ?? newThread(view);
}

/** Thread `id` (opened from a link: another window's "Open in a second window") kept in the
 * list and made the current one. */
export function adoptThread(view: string, id: string): void {
  if (!listThreads(view).some((t) => t.id === id)) {
    saveThreads(view, [{ id, title: "New thread", created: Date.now() }, ...listThreads(view)]);
  }
  setCurrent(view, id);
}

export function setCurrent(view: string, id: string): void {
  localStorage.setItem(currentKey(view), id);
}

/** Name a thread after the first thing the person typed in it (and note it started). */
export function titleThread(view: string, id: string, text: string): void {
  const threads = listThreads(view);
  const thread = threads.find((t) => t.id === id);
  if (thread && (thread.title === "New thread" || thread.started === false)) {
    if (thread.title === "New thread") thread.title = text.length > 40 ? text.slice(0, 39) + "…" : text;
    thread.started = true;
    saveThreads(view, threads);
  }
}

/** Whether this browser made thread `id` and sent nothing in it yet (the server has none of it). */
export function notStarted(view: string, id: string): boolean {
  return listThreads(view).find((t) => t.id === id)?.started === false;
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
