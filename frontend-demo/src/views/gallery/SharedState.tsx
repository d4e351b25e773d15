// Shared state: one todo list, in `agent.state` (`useAgent`). The agent changes it with tools
// (STATE_DELTA); the person changes it here (`agent.setState`), and the next run starts from it.

import { useState, type FormEvent } from "react";
import { useAgent } from "@copilotkit/react-core/v2";
import { FeaturePage, Try } from "./frame";
import { newId, normalize, type DemoState } from "../../shared/model";

const AGENT = "shared_state";
const START: DemoState = { todos: [], cart: [], orders: [] };

export default function SharedState() {
  return (
    <FeaturePage agentId={AGENT} hint="Ask the agent to change the list…" state={START}>
      <TodoList />
    </FeaturePage>
  );
}

function TodoList() {
  const { agent } = useAgent({ agentId: AGENT });
  const state = normalize(agent.state);
  const [text, setText] = useState("");
  const write = (next: DemoState) => agent.setState(next);
  const add = (e: FormEvent) => {
    e.preventDefault();
    if (text.trim()) write({ ...state, todos: [...state.todos, { id: newId(), text: text.trim(), done: false }] });
    setText("");
  };
  return (
    <section className="card" data-testid="shared-list">
      <h2>Shared state</h2>
      <p>One todo list in the run's shared state: the agent edits it with its tools, you edit it here, and each side sees the other's changes.</p>
      <ul>
        {state.todos.map((t) => (
          <li key={t.id} className={`row ${t.done ? "done" : ""}`} data-testid="shared-todo">
            <input
              type="checkbox"
              aria-label={`done: ${t.text}`}
              checked={t.done}
              disabled={agent.isRunning}
              onChange={() => write({ ...state, todos: state.todos.map((x) => (x.id === t.id ? { ...x, done: !x.done } : x)) })}
            />
            <span className="grow label">{t.text}</span>
          </li>
        ))}
        {state.todos.length === 0 && <li className="empty">Nothing to do.</li>}
      </ul>
      <form className="add" onSubmit={add}>
        <input aria-label="New todo" placeholder="New todo" value={text} onChange={(e) => setText(e.target.value)} />
        <button type="submit">Add</button>
      </form>
      <Try phrases={["add call mom to my list", "clear completed", "plan my week"]} />
    </section>
  );
}
