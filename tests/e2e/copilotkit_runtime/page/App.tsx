// What a person sees: the chat (<CopilotChat>), the page's background (changed by the
// `change_background` frontend tool), the approval `useInterrupt` renders, the shared state
// `useAgent` gives (the todos and the orders), which the person can edit too, and the person's
// threads (`useThreads`, which the runtime's hooks answer from the server's `GET /threads`). A
// `?token=` in the address is sent as `Authorization: Bearer <token>`; the runtime forwards it.
import { useEffect, useState } from "react";
import { z } from "zod";
import {
  CopilotChat,
  CopilotKit,
  useAgent,
  useFrontendTool,
  useInterrupt,
  useThreads,
} from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";

const AGENT = "todo";

type Todo = { text: string; done: boolean };
type TodoState = { todos?: Todo[]; orders?: string[] };

const TOKEN = new URLSearchParams(location.search).get("token");
// `?thread=<id>`: the chat's thread, so that a reload comes back to it (the runtime's connect).
const THREAD = new URLSearchParams(location.search).get("thread") ?? undefined;

export function App() {
  const [error, setError] = useState<string | null>(null);
  return (
    <CopilotKit
      runtimeUrl="/api/copilotkit"
      headers={TOKEN ? { Authorization: `Bearer ${TOKEN}` } : undefined}
      agentId={AGENT}
      enableInspector={false}
      showDevConsole={false}
      onError={(e) => setError(e.error?.message ?? String(e))}
    >
      {error && <p data-testid="error">{error}</p>}
      <Page />
    </CopilotKit>
  );
}

function Page() {
  const { agent, isReady } = useAgent({ agentId: AGENT });
  const state = (agent.state ?? {}) as TodoState;
  const [background, setBackground] = useState("white");

  useFrontendTool({
    name: "change_background",
    description: "Change the page's background color.",
    parameters: z.object({ color: z.string().describe("a CSS color name") }),
    handler: async ({ color }) => {
      setBackground(color);
      return `the background is ${color}`;
    },
  });

  const approval = useInterrupt({
    agentId: AGENT,
    renderInChat: false,
    render: ({ interrupt, resolve }) => (
      <div role="dialog" data-testid="approval">
        <p>{interrupt?.message ?? "Approve?"}</p>
        <button onClick={() => resolve({ approved: true })}>Approve</button>
        <button onClick={() => resolve({ approved: false })}>Deny</button>
      </div>
    ),
  });

  const addByHand = (text: string) =>
    agent.setState({ ...state, todos: [...(state.todos ?? []), { text, done: false }] });

  return (
    <main data-testid="page" data-background={background} style={{ background, display: "flex", gap: 16 }}>
      <section data-testid="chat" style={{ flex: 1, height: "90vh" }}>
        <CopilotChat agentId={AGENT} threadId={THREAD} />
      </section>
      <aside style={{ width: 320 }}>
        <h2>Todos</h2>
        <ul data-testid="todos">
          {(state.todos ?? []).map((todo, i) => (
            <li key={i}>{todo.text}</li>
          ))}
        </ul>
        <button onClick={() => addByHand("walk the dog")}>Add "walk the dog"</button>
        <h2>Orders</h2>
        <ul data-testid="orders">
          {(state.orders ?? []).map((order, i) => (
            <li key={i}>{order}</li>
          ))}
        </ul>
        <p data-testid="running">{!isReady ? "connecting" : agent.isRunning ? "running" : "idle"}</p>
        <p>
          thread <code data-testid="thread">{agent.threadId}</code>
        </p>
        <Threads running={agent.isRunning} />
      </aside>
      {approval}
    </main>
  );
}

// The person's threads, newest change first; read again whenever a run ends. Each opens the
// thread (`?thread=`), keeping the page's token.
function Threads({ running }: { running: boolean }) {
  const { threads, error, refetchThreads } = useThreads({ agentId: AGENT });
  useEffect(() => {
    if (!running) refetchThreads();
  }, [running, refetchThreads]);
  const open = (id: string) => `?${new URLSearchParams({ ...(TOKEN ? { token: TOKEN } : {}), thread: id })}`;
  return (
    <nav>
      <h2>Threads</h2>
      <ul data-testid="threads">
        {threads.map((thread) => (
          <li key={thread.id} data-thread={thread.id}>
            <a href={open(thread.id)}>{thread.name ?? thread.id}</a>
          </li>
        ))}
      </ul>
      {error && <p data-testid="threads-error">{error.message}</p>}
    </nav>
  );
}
