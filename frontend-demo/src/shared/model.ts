// The demo's shared state (pyox_agents/server/demo.py, DemoState) and the person's edits of it.

export type Todo = { id: string; text: string; done: boolean };
export type CartItem = { id: string; name: string; qty: number };
export type Order = { id: string; items: CartItem[]; status: string };
export type DemoState = { todos: Todo[]; cart: CartItem[]; orders: Order[] };

export const AGENT = "demo";
export const EMPTY: DemoState = { todos: [], cart: [], orders: [] };

/** The state as the page shows it: whatever the server sent, with missing lists made empty. */
export function normalize(value: unknown): DemoState {
  const v = (value && typeof value === "object" ? value : {}) as Partial<DemoState>;
  return {
    todos: Array.isArray(v.todos) ? v.todos : [],
    cart: Array.isArray(v.cart) ? v.cart : [],
    orders: Array.isArray(v.orders) ? v.orders : [],
  };
}

export function newId(): string {
  return crypto.randomUUID().replace(/-/g, "").slice(0, 8);
}

/** What the person did by hand; each returns the new state (the old one is not changed). */
export const edits = {
  addTodo: (s: DemoState, text: string): DemoState => ({
    ...s,
    todos: [...s.todos, { id: newId(), text, done: false }],
  }),
  toggleTodo: (s: DemoState, id: string): DemoState => ({
    ...s,
    todos: s.todos.map((t) => (t.id === id ? { ...t, done: !t.done } : t)),
  }),
  editTodo: (s: DemoState, id: string, text: string): DemoState => ({
    ...s,
    todos: s.todos.map((t) => (t.id === id ? { ...t, text } : t)),
  }),
  removeTodo: (s: DemoState, id: string): DemoState => ({
    ...s,
    todos: s.todos.filter((t) => t.id !== id),
  }),
  addCartItem: (s: DemoState, name: string): DemoState => ({
    ...s,
    cart: [...s.cart, { id: newId(), name, qty: 1 }],
  }),
  setQty: (s: DemoState, id: string, qty: number): DemoState => ({
    ...s,
    cart: s.cart.map((c) => (c.id === id ? { ...c, qty: Math.max(1, qty) } : c)),
  }),
  removeCartItem: (s: DemoState, id: string): DemoState => ({
    ...s,
    cart: s.cart.filter((c) => c.id !== id),
  }),
};

export type Edit = (s: DemoState) => DemoState;

/** Ids of the items that are new or different in `next`: what the agent just changed. */
export function changedIds(prev: DemoState, next: DemoState): Set<string> {
  const out = new Set<string>();
  const lists: (keyof DemoState)[] = ["todos", "cart", "orders"];
  for (const key of lists) {
    const before = new Map((prev[key] as { id: string }[]).map((item) => [item.id, JSON.stringify(item)]));
    for (const item of next[key] as { id: string }[]) {
      if (before.get(item.id) !== JSON.stringify(item)) out.add(item.id);
    }
  }
  return out;
}

/** One line of the patch log: where it came from and the RFC 6902 operations (or a snapshot). */
export type PatchEntry = { at: string; source: string; ops: unknown };

export function patchEntry(source: string, ops: unknown): PatchEntry {
  return { at: new Date().toLocaleTimeString(), source, ops };
}

/** A message of the chat panel, whatever protocol it came over. */
export type ToolView = {
  id: string;
  name: string;
  args: string;
  status: "running" | "done" | "error" | "waiting" | "denied";
  result?: string;
};
/** One message of the chat; `extra` is shown under its text (a view's own parts: sources, progress, metadata). */
export type ChatItem = { id: string; role: "user" | "assistant"; text: string; tools: ToolView[]; extra?: import("react").ReactNode };

/** A pending approval of a tool call (checkout). */
export type Approval = { tool: string; args: unknown; message: string };
