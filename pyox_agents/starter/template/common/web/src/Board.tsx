// The todo list, edited by hand: each change is given whole to `onChange` (the page sends it to
// the thread as an edit).

import { useState, type FormEvent } from "react";

export type Todo = { text: string; done: boolean };
export type BoardState = { todos: Todo[] };

export const EMPTY: BoardState = { todos: [] };

export function Board({ state, onChange }: { state: BoardState; onChange: (next: BoardState) => void }) {
  const [text, setText] = useState("");
  const todos = state.todos ?? [];
  const set = (next: Todo[]) => onChange({ ...state, todos: next });
  const add = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim()) return;
    set([...todos, { text: text.trim(), done: false }]);
    setText("");
  };
  return (
    <section className="board" aria-label="Todos">
      <h2>Todos</h2>
      <ul data-testid="todos">
        {todos.map((todo, i) => (
          <li key={i} className={todo.done ? "done" : undefined}>
            <label>
              <input
                type="checkbox"
                aria-label={`done: ${todo.text}`}
                checked={todo.done}
                onChange={() => set(todos.map((t, j) => (j === i ? { ...t, done: !t.done } : t)))}
              />
              <span>{todo.text}</span>
            </label>
            <button type="button" aria-label={`remove: ${todo.text}`} onClick={() => set(todos.filter((_, j) => j !== i))}>
              ×
            </button>
          </li>
        ))}
        {todos.length === 0 && <li className="muted">Nothing yet.</li>}
      </ul>
      <form onSubmit={add}>
        <input aria-label="New todo" placeholder="A todo" value={text} onChange={(e) => setText(e.target.value)} />
        <button type="submit">Add</button>
      </form>
    </section>
  );
}
