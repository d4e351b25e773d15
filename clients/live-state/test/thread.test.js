// LiveThread and followAgent against a fake server (a fetch function): node --test test/
import { test } from "node:test";
import assert from "node:assert/strict";
import { LiveThread, followAgent, applyOps } from "../index.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const until = async (ready, what) => {
  const deadline = Date.now() + 3000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
};

/** A fake server: a feed (push items; `cut()` ends the open stream) and PATCH answers. */
function fakeServer() {
  const server = { requests: [], patches: [], answers: [], streams: [], items: [], gate: null };
  server.push = (item) => {
    const id = `e-${server.items.length}`;
    server.items.push({ id, item });
    for (const s of server.streams) s.send(id, item);
  };
  server.cut = () => { for (const s of server.streams.splice(0)) s.close(); };
  server.fetch = async (url, init = {}) => {
    const headers = new Headers(init.headers);
    if (init.method === "PATCH") {
      const body = JSON.parse(init.body);
      server.patches.push(body);
      await server.gate;
      const [status, answer, extra] = server.answers.shift() ?? [200, { version: 0, delta: [] }];
      return new Response(JSON.stringify(typeof answer === "function" ? answer(body) : answer),
                          { status, headers: { "content-type": "application/json", ...extra } });
    }
    server.requests.push({ url, lastEventId: headers.get("last-event-id") });
    const encoder = new TextEncoder();
    let controller;
    const body = new ReadableStream({ start(c) { controller = c; } });
    const stream = {
      send: (id, item) => controller.enqueue(encoder.encode(`id: ${id}\r\ndata: ${JSON.stringify(item)}\r\n\r\n`)),
      close: () => controller.close(),
    };
    init.signal?.addEventListener("abort", () => { try { controller.error(new DOMException("aborted", "AbortError")); } catch {} });
    const after = headers.get("last-event-id");
    const at = server.items.findIndex((x) => x.id === after);
    if (at === -1) stream.send(`e-${server.items.length - 1}`, server.snapshot());
    else for (const { id, item } of server.items.slice(at + 1)) stream.send(id, item);
    server.streams.push(stream);
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  return server;
}

const todos = (...ids) => ({ todos: ids.map((id) => ({ id, done: false })) });

test("a LiveThread follows the feed, reconnects with Last-Event-ID, and edits on its version", async () => {
  const server = fakeServer();
  let state = todos("a", "b");
  let version = 1;
  server.snapshot = () => ({ type: "snapshot", version, state, running: false });
  const commit = (delta, by = "agent") => {
    state = applyOps(state, delta);
    version++;
    server.push({ type: "state", version, delta, by, run_id: null });
  };
  const thread = new LiveThread({ baseUrl: "http://s/", agent: "todo", threadId: "t1", fetch: server.fetch });
  const views = [];
  thread.subscribe((view) => views.push(view));
  await thread.start();
  assert.deepEqual(thread.state, todos("a", "b"));
  assert.equal(thread.version, 1);
  commit([{ op: "add", path: "/todos/2", value: { id: "c", done: false } }]);
  await until(() => thread.version === 2, "version 2");
  server.cut();
  commit([{ op: "remove", path: "/todos/0" }]); // while the tab is cut off
  await until(() => thread.version === 3, "version 3 after the reconnect");
  assert.deepEqual(server.requests.map((r) => r.lastEventId), [null, "e-0"]);
  assert.deepEqual(thread.state, todos("b", "c"));

  // An edit shows at once, goes on the version it was made on, and stays on top of newer
  // versions (moved past them) until its own version comes.
  // (the server answers once the test opens the gate: after version 4)
  const gate = {};
  const opened = new Promise((resolve) => { gate.open = resolve; });
  server.answers.push([200, { version: 5, delta: [{ op: "replace", path: "/todos/2/done", value: true }] }]);
  server.gate = opened;
  const done = thread.edit([{ op: "replace", path: "/todos/1/done", value: true }]); // c
  assert.deepEqual(thread.state.todos.map((t) => t.done), [false, true]);
  commit([{ op: "add", path: "/todos/0", value: { id: "x", done: false } }]);
  await until(() => thread.version === 4, "version 4");
  assert.deepEqual(thread.state.todos.map((t) => `${t.id}${t.done ? "+" : ""}`), ["x", "b", "c+"]);
  assert.equal(thread.pending, 1);
  gate.open();
  const answer = await done;
  assert.equal(answer.ok, true);
  assert.equal(answer.version, 5);
  assert.deepEqual(server.patches[0], { base: 3, patch: [{ op: "replace", path: "/todos/1/done", value: true }] });
  // version 5 came from the answer (the one after the tab's 4): no longer pending
  assert.equal(thread.version, 5);
  assert.equal(thread.pending, 0);
  assert.deepEqual(thread.state.todos.map((t) => `${t.id}${t.done ? "+" : ""}`), ["x", "b", "c+"]);
  thread.stop();
});

test("a refused edit adopts the server's state and tells onRefused; a busy one is sent again", async () => {
  const server = fakeServer();
  server.snapshot = () => ({ type: "snapshot", version: 1, state: todos("a"), running: false });
  const refusals = [];
  const thread = new LiveThread({ baseUrl: "http://s", agent: "todo", threadId: "t1", fetch: server.fetch,
                                  onRefused: (r) => refusals.push(r) });
  await thread.start();
  server.answers.push([409, { error: "a run is already active on thread 't1'" }]);
  server.answers.push([429, { error: "too many edits" }, { "retry-after": "0" }]);
  server.answers.push([409, { error: "the place you edited is gone", field: "base", version: 2, state: {} }]);
  const answer = await thread.edit([{ op: "replace", path: "/todos/0/done", value: true }]);
  assert.equal(server.patches.length, 3);
  assert.equal(answer.ok, false);
  assert.equal(answer.status, 409);
  assert.deepEqual(refusals.map((r) => [r.error, r.version]), [["the place you edited is gone", 2]]);
  assert.deepEqual(thread.state, {});
  assert.equal(thread.version, 2);
  assert.throws(() => thread.edit([{ op: "remove", path: "/todos/0" }]), /"\/todos\/0": the path does not exist/);
  thread.stop();
});

test("an edit made on a pending one goes once that one is shown, moved onto its version", async () => {
  const server = fakeServer();
  let state = todos("a", "b");
  server.snapshot = () => ({ type: "snapshot", version: 1, state, running: false });
  const thread = new LiveThread({ baseUrl: "http://s", agent: "todo", threadId: "t1", fetch: server.fetch });
  await thread.start();
  server.answers.push([200, { version: 3, delta: [{ op: "add", path: "/todos/3", value: { id: "c", done: false } }] }]);
  server.answers.push([200, { version: 4, delta: [] }]);
  const first = thread.edit([{ op: "add", path: "/todos/-", value: { id: "c", done: false } }]);
  const second = thread.edit([{ op: "replace", path: "/todos/2/done", value: true }]); // c, as this tab sees it
  await first;
  // someone else's version 2 (x first), then this tab's 3 (c at the end)
  state = todos("x", "a", "b");
  server.push({ type: "state", version: 2, delta: [{ op: "add", path: "/todos/0", value: { id: "x", done: false } }], by: "person" });
  server.push({ type: "state", version: 3, delta: [{ op: "add", path: "/todos/3", value: { id: "c", done: false } }], by: "person" });
  await second;
  assert.deepEqual(server.patches[1], { base: 3, patch: [{ op: "replace", path: "/todos/3/done", value: true }] });
  thread.stop();
});

test("an edit whose version the feed brings before the server's answer is shown once", async () => {
  // A run takes a person's edit at once and answers the PATCH once it keeps it: the feed can
  // bring the edit's version first (moved past what the run committed meanwhile).
  const server = fakeServer();
  server.snapshot = () => ({ type: "snapshot", version: 1, state: todos("a"), running: true });
  const thread = new LiveThread({ baseUrl: "http://s", agent: "todo", threadId: "t1", fetch: server.fetch });
  await thread.start();
  const gate = {};
  server.gate = new Promise((resolve) => { gate.open = resolve; });
  server.answers.push([200, { version: 3, delta: [{ op: "add", path: "/todos/2", value: { id: "c", done: false } }] }]);
  const done = thread.edit([{ op: "add", path: "/todos/1", value: { id: "c", done: false } }]);
  await until(() => server.patches.length === 1, "the edit sent");
  server.push({ type: "state", version: 2, delta: [{ op: "add", path: "/todos/1", value: { id: "x", done: false } }], by: "agent" });
  server.push({ type: "state", version: 3, delta: [{ op: "add", path: "/todos/2", value: { id: "c", done: false } }], by: "person" });
  await until(() => thread.version === 3, "version 3");
  assert.deepEqual(thread.state.todos.map((t) => t.id), ["a", "x", "c"]);
  assert.equal(thread.pending, 1); // until the server answers it
  gate.open();
  assert.equal((await done).version, 3);
  assert.deepEqual(thread.state.todos.map((t) => t.id), ["a", "x", "c"]);
  assert.equal(thread.pending, 0);
  thread.stop();
});

test("an edit that changed nothing does not take the latest version as its own", async () => {
  // Another tab deleted "b" (version 2) before this tab's delete of "b" came: the server
  // answers the edit that changed nothing with its latest version and no delta. That version
  // is the other tab's: it comes with the feed, and the tab shows it, not version 1 again.
  const server = fakeServer();
  server.snapshot = () => ({ type: "snapshot", version: 1, state: todos("a", "b"), running: false });
  const thread = new LiveThread({ baseUrl: "http://s", agent: "todo", threadId: "t1", fetch: server.fetch });
  await thread.start();
  server.answers.push([200, { version: 2, delta: [] }]);
  const done = await thread.edit([{ op: "remove", path: "/todos/1" }]);
  assert.deepEqual([done.version, done.delta], [2, []]);
  server.push({ type: "state", version: 2, delta: [{ op: "remove", path: "/todos/1" }], by: "person" });
  server.push({ type: "state", version: 3, delta: [{ op: "add", path: "/todos/1", value: { id: "c", done: false } }], by: "person" });
  await until(() => thread.version === 3, "version 3");
  assert.deepEqual(thread.state.todos.map((t) => t.id), ["a", "c"]);
  assert.equal(thread.pending, 0);
  thread.stop();
});

/** A fake @ag-ui/client agent: what followAgent uses of AbstractAgent. */
function fakeAgent(state) {
  const agent = {
    state, isRunning: false, subscribers: [], middlewares: [], sent: [],
    subscribe(s) { agent.subscribers.push(s); return { unsubscribe: () => { agent.subscribers = agent.subscribers.filter((x) => x !== s); } }; },
    use(...m) { agent.middlewares.push(...m); return agent; },
    setState(s) {
      agent.state = structuredClone(s);
      void (async () => { for (const sub of agent.subscribers) await sub.onStateChanged?.({ state: agent.state, agent }); })();
    },
    async runAgent(forwardedProps = {}) {
      const input = { state: structuredClone(agent.state), forwardedProps };
      const chain = agent.middlewares.reduceRight((next, m) => ({ run: (i) => m(i, next) }), { run: (i) => agent.sent.push(i) });
      chain.run(input);
    },
  };
  return agent;
}

test("followAgent: the agent holds the thread's state, its setState edits the thread, runs name the version", async () => {
  const server = fakeServer();
  server.snapshot = () => ({ type: "snapshot", version: 7, state: todos("a"), running: false });
  const thread = new LiveThread({ baseUrl: "http://s", agent: "todo", threadId: "t1", fetch: server.fetch });
  await thread.start();
  const agent = fakeAgent({});
  const unfollow = followAgent(thread, agent);
  assert.deepEqual(agent.state, todos("a"));
  server.answers.push([200, { version: 8, delta: [{ op: "add", path: "/todos/1", value: { id: "b", done: false } }] }]);
  agent.setState(todos("a", "b")); // the page's edit
  await until(() => server.patches.length === 1, "the edit");
  assert.deepEqual(server.patches[0], { base: 7, patch: [{ op: "add", path: "/todos/1", value: { id: "b", done: false } }] });
  await thread.flush();
  await agent.runAgent({ doubleTexting: "enqueue" });
  assert.deepEqual(agent.sent[0], { state: todos("a", "b"), forwardedProps: { doubleTexting: "enqueue", stateVersion: 8 } });
  unfollow();
  thread.stop();
});
