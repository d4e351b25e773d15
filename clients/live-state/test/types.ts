// Type check of index.d.ts against the real clients (tests/e2e/node_modules: run `npm ci`
// there first): npm run typecheck. Compiled only, never run.
import { HttpAgent, runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
import * as agui0059 from "agui0059";
import { HttpAgent as HttpAgent0059 } from "agui0059";
import { DefaultChatTransport, type UIMessage } from "ai";
import { LiveThread, connectingAgent, followAgent, stripOldStateParts, applyOps, diffState, rebaseOps, type Operation, type Refusal } from "../index.js";

type Todos = { todos: { id: string; text: string; done: boolean }[] };
const thread = new LiveThread<Todos>({ baseUrl: "http://x", agent: "todo", threadId: "t", onRefused: (r: Refusal<Todos>) => console.log(r.error, r.state.todos.length) });
const stop = thread.subscribe(({ state, version, running, pending }) => console.log(state.todos, version, running, pending));
stop();
async function main() {
  await thread.start();
  const r = await thread.edit([{ op: "replace", path: "/todos/0/done", value: true }]);
  if (r.ok) console.log(r.version, r.delta); else console.log(r.error, r.status);
  await thread.flush();
  const a = new HttpAgent({ url: "http://x" });
  const b = new HttpAgent0059({ url: "http://x" });
  const unfollow = followAgent(thread, a);
  followAgent(thread, b);
  unfollow();
  const Connecting = connectingAgent(HttpAgent, { runHttpRequest, transformHttpEventStream });
  const Connecting0059 = connectingAgent(agui0059.HttpAgent, agui0059);
  const c = new Connecting({ url: "http://x", threadId: "t" });
  const c0 = new Connecting0059({ url: "http://x" });
  console.log(c.connectUrl(), c.threadId, c0.connectUrl());
  followAgent(thread, c);
  const t = new DefaultChatTransport<UIMessage>({
    api: "/api",
    prepareSendMessagesRequest: ({ id, messages, body, trigger, messageId }) => ({
      body: { ...body, id, messages: stripOldStateParts(messages), trigger, messageId },
    }),
  });
  const ops: Operation[] = diffState({ a: 1 }, { a: 2 });
  const s: { a: number } = applyOps({ a: 1 }, ops);
  console.log(t, s, rebaseOps(ops, [], { a: 1 }));
}
void main();
