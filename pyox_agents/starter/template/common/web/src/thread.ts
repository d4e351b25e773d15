// The thread the page shows is in its address, `?thread=<id>`: a reload keeps it, and the same
// address in a second window opens it too. The server knows a thread once its first run has
// started it; until then the page does not ask for it (it would answer 404).

/** Where the agent is served (`pyox-agents serve agent:agent`); set VITE_PYOX_URL to change it. */
export const SERVER = (import.meta.env.VITE_PYOX_URL ?? "http://127.0.0.1:8000").replace(/\/+$/, "");

/** The agent's name: `Agent(name="todo")` in agent.py. */
export const AGENT = "todo";

const startedKey = (id: string) => `${AGENT}:started:${id}`;

/** The thread in the address (a new one when there is none), and whether it has started. */
export function currentThread(): { id: string; started: boolean } {
  const url = new URL(location.href);
  const given = url.searchParams.get("thread");
  if (given) return { id: given, started: localStorage.getItem(startedKey(given)) !== "no" };
  const id = crypto.randomUUID();
  localStorage.setItem(startedKey(id), "no");
  url.searchParams.set("thread", id);
  history.replaceState(null, "", url);
  return { id, started: false };
}

/** Remember that the server has thread `id` now (its first run started it). */
export function markStarted(id: string): void {
  localStorage.removeItem(startedKey(id));
}

/** Open a new thread. */
export function openNewThread(): void {
  const url = new URL(location.href);
  url.searchParams.delete("thread");
  location.assign(url);
}
