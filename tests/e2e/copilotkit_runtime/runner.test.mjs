// PyoxAgentRunner and its hooks in CopilotKit's runtime (the real `@copilotkit/runtime` 1.75
// fetch handler, no browser), against a real pyox-agents server with bearer auth (ann, bob):
//
//   PYOX_AGENTS_URL=http://127.0.0.1:<port> PYOX_AGENTS_CONTROL=<its /test> node --test runner.test.mjs
//
// run by tests/e2e/test_copilotkit_runtime.py, whose server has the todo agent, its
// `work_slowly` tool held until the run is stopped, and `POST <control>/await-work` (a run is
// held there).
import assert from "node:assert/strict";
import { test } from "node:test";
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime, createCopilotRuntimeHandler } from "@copilotkit/runtime/v2";
import { PyoxAgentRunner } from "@pyox-agents/copilotkit-runtime";

const SERVER = process.env.PYOX_AGENTS_URL;
const CONTROL = process.env.PYOX_AGENTS_CONTROL;
const BASE = "http://runtime.test/api/copilotkit";
const ANN = { authorization: "Bearer tok-ann" };
const BOB = { authorization: "Bearer tok-bob" };

/** A runtime with its own runner: a new one is what a restarted runtime process has. */
function runtime(hooks = {}) {
  const runner = new PyoxAgentRunner({ url: SERVER });
  const copilotRuntime = new CopilotRuntime({
    agents: { todo: new HttpAgent({ url: runner.agentUrl("todo") }) },
    runner,
  });
  const handler = createCopilotRuntimeHandler({ runtime: copilotRuntime, basePath: "/api/copilotkit", hooks: runner.hooks(hooks) });
  return { runner, call: (path, init = {}) => handler(new Request(`${BASE}${path}`, init)) };
}

function input(threadId, messages) {
  return { threadId, runId: crypto.randomUUID(), state: {}, messages, tools: [], context: [], forwardedProps: {} };
}

async function events(response) {
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
}

async function listed(call, headers) {
  const response = await call("/threads?agentId=todo", { headers });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()).threads;
}

const json = (headers) => ({ ...headers, "content-type": "application/json" });

/** Waits until the server holds a run in `work_slowly`. */
async function awaitWork() {
  const response = await fetch(`${CONTROL}/await-work`, { method: "POST" });
  assert.equal(response.status, 200, await response.text());
}

/** Ann's run of "hello" on `threadId`, to its end, then her run of "work slowly" held on the
 * server: the two requests (their runIds) and the second's events (a promise). */
async function endedThenGoing(call, threadId) {
  const ended = input(threadId, [{ id: `${threadId}-u1`, role: "user", content: "hello" }]);
  await events(await call("/agent/todo/run", { method: "POST", headers: json(ANN), body: JSON.stringify(ended) }));
  const going = input(threadId, [{ id: `${threadId}-u2`, role: "user", content: "work slowly" }]);
  const stream = call("/agent/todo/run", { method: "POST", headers: json(ANN), body: JSON.stringify(going) }).then(events);
  await awaitWork();
  return { ended, going, stream };
}

const STOPPED = { stopped: true, interrupt: { type: "RUN_ERROR", message: "Run stopped by user", code: "STOPPED" } };

test("the runtime says it serves the thread list and its changes", async () => {
  const info = await (await runtime().call("/info")).json();
  assert.deepEqual(info.threadEndpoints, { list: true, inspect: false, mutations: true, realtimeMetadata: false });
  assert.deepEqual(Object.keys(info.agents), ["todo"]);
});

test("a run goes to the server, and the thread is the caller's", async () => {
  const { call } = runtime();
  const body = JSON.stringify(input("trip", [{ id: "u1", role: "user", content: "add book the flight" }]));
  const run = await events(await call("/agent/todo/run", { method: "POST", headers: json(ANN), body }));
  assert.deepEqual([run[0].type, run.at(-1).type], ["RUN_STARTED", "RUN_FINISHED"]);
  const anns = await listed(call, ANN);
  assert.equal(anns.length, 1);
  assert.equal(anns[0].id, "trip");
  assert.equal(anns[0].name, "add book the flight");
  assert.equal(anns[0].agentId, "todo");
  assert.equal(anns[0].archived, false);
  assert.ok(!Number.isNaN(Date.parse(anns[0].updatedAt)));
  assert.deepEqual(await listed(call, BOB), []);
});

test("another runtime (a restart) connects to the thread: its messages and state", async () => {
  const { call } = runtime();
  const body = JSON.stringify(input("trip", []));
  const back = await events(await call("/agent/todo/connect", { method: "POST", headers: json(ANN), body }));
  const messages = back.find((event) => event.type === "MESSAGES_SNAPSHOT").messages;
  assert.deepEqual(messages.map((m) => m.content).filter(Boolean), ["add book the flight", "added book the flight", "Added buy milk."]);
  const state = back.findLast((event) => event.type === "STATE_SNAPSHOT").snapshot;
  assert.deepEqual(state.todos, [{ text: "book the flight", done: false }]);
  assert.equal(back.at(-1).type, "RUN_FINISHED");
});

test("another person's thread is not given back", async () => {
  const { call } = runtime();
  const body = JSON.stringify(input("trip", []));
  const back = await events(await call("/agent/todo/connect", { method: "POST", headers: json(BOB), body }));
  assert.equal(back.length, 1);
  assert.equal(back[0].type, "RUN_ERROR");
  assert.equal(back[0].code, "HTTP_404");
});

test("rename, archive, restore and delete reach the server as the caller", async () => {
  const { call } = runtime();
  const thread = (body) => ({ headers: json(ANN), body: JSON.stringify({ agentId: "todo", ...body }) });
  assert.equal((await call("/threads/trip", { method: "PATCH", ...thread({ name: "Lisbon" }) })).status, 200);
  assert.equal((await listed(call, ANN))[0].name, "Lisbon");
  assert.equal((await call("/threads/trip", { method: "PATCH", headers: json(BOB), body: JSON.stringify({ agentId: "todo", name: "mine" }) })).status, 404);
  assert.equal((await call("/threads/trip/archive", { method: "POST", ...thread({}) })).status, 200);
  assert.deepEqual(await listed(call, ANN), []);
  assert.equal((await call("/threads/trip", { method: "PATCH", ...thread({ archived: false }) })).status, 200);
  assert.equal((await listed(call, ANN)).length, 1);
  assert.equal((await call("/threads/trip", { method: "DELETE", ...thread({}) })).status, 200);
  assert.deepEqual(await listed(call, ANN), []);
});

test("the list pages with the server's cursor", async () => {
  const { call } = runtime();
  for (const id of ["p1", "p2", "p3"]) {
    const body = JSON.stringify(input(id, [{ id: `${id}-u`, role: "user", content: "hello" }]));
    await events(await call("/agent/todo/run", { method: "POST", headers: json(ANN), body }));
  }
  const first = await (await call("/threads?agentId=todo&limit=2", { headers: ANN })).json();
  assert.deepEqual(first.threads.map((t) => t.id), ["p3", "p2"]);
  const rest = await (await call(`/threads?agentId=todo&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`, { headers: ANN })).json();
  assert.deepEqual(rest.threads.map((t) => t.id), ["p1"]);
  assert.equal(rest.nextCursor, null);
});

test("includeArchived lists the archived threads too, with archived: true; without it they are left out", async () => {
  const { call } = runtime();
  const thread = JSON.stringify({ agentId: "todo" });
  assert.equal((await call("/threads/p2/archive", { method: "POST", headers: json(ANN), body: thread })).status, 200);
  try {
    const withArchived = await (await call("/threads?agentId=todo&includeArchived=true", { headers: ANN })).json();
    assert.deepEqual(withArchived.threads.map((t) => [t.id, t.archived]), [["p3", false], ["p2", true], ["p1", false]]);
    const paged = await (await call("/threads?agentId=todo&includeArchived=true&limit=2", { headers: ANN })).json();
    const rest = await (await call(`/threads?agentId=todo&includeArchived=true&limit=2&cursor=${encodeURIComponent(paged.nextCursor)}`, { headers: ANN })).json();
    assert.deepEqual([...paged.threads, ...rest.threads].map((t) => t.id), ["p3", "p2", "p1"]);
    assert.deepEqual((await listed(call, ANN)).map((t) => [t.id, t.archived]), [["p3", false], ["p1", false]]);
  } finally {
    await call("/threads/p2", { method: "PATCH", headers: json(ANN), body: JSON.stringify({ agentId: "todo", archived: false }) });
  }
});

test("a stop with no run going answers stopped: false; the runner's own calls use its headers", async () => {
  const { call } = runtime();
  const stop = await call("/agent/todo/stop/p1", { method: "POST", headers: ANN });
  assert.equal(stop.status, 200);
  assert.equal((await stop.json()).stopped, false);
  const withCredential = new PyoxAgentRunner({ url: SERVER, headers: ANN });
  assert.equal(await withCredential.isRunning({ threadId: "p1" }), false);
  assert.equal(await withCredential.isRunning({ threadId: "no-such-thread" }), false);
  assert.equal(await withCredential.stop({ threadId: "p1" }), false); // never ran or connected here
  await assert.rejects(new PyoxAgentRunner({ url: SERVER }).isRunning({ threadId: "p1" }), /HTTP 401.*give it a credential/);
});

test("a server that does not answer is a 502 that says where the runner looked", async () => {
  const runner = new PyoxAgentRunner({ url: "http://127.0.0.1:9" });
  const copilotRuntime = new CopilotRuntime({ agents: { todo: new HttpAgent({ url: runner.agentUrl("todo") }) }, runner });
  const handler = createCopilotRuntimeHandler({ runtime: copilotRuntime, basePath: "/api/copilotkit", hooks: runner.hooks() });
  const answer = await handler(new Request(`${BASE}/threads?agentId=todo`, { headers: ANN }));
  assert.equal(answer.status, 502);
  assert.match((await answer.json()).error, /server at http:\/\/127\.0\.0\.1:9 did not answer/);
});

test("the page's own hooks run first, and can refuse", async () => {
  const { call } = runtime({
    onBeforeHandler: ({ request }) => {
      if (!request.headers.get("authorization")) throw Response.json({ error: "sign in" }, { status: 401 });
    },
  });
  const refused = await call("/threads?agentId=todo");
  assert.equal(refused.status, 401);
  assert.equal((await refused.json()).error, "sign in");
  assert.equal((await listed(call, ANN)).length, 3);
});

test("a runner needs the server's url", () => {
  assert.throws(() => new PyoxAgentRunner({ url: "127.0.0.1:8000" }), /needs \{ url \}/);
});

test("the stop route stops the run its runId names: a stop for a run that ended leaves the thread's next run going", async () => {
  const { call } = runtime();
  const ownCalls = new PyoxAgentRunner({ url: SERVER, headers: ANN });
  const { ended, going, stream } = await endedThenGoing(call, "s1");
  const stop = (body) => call("/agent/todo/stop/s1", { method: "POST", headers: json(ANN), body });
  const stale = await stop(JSON.stringify({ runId: ended.runId }));
  assert.equal(stale.status, 200);
  assert.deepEqual(await stale.json(), { stopped: false, message: `Run '${ended.runId}' is not the active run for thread 's1'.` });
  assert.equal(await ownCalls.isRunning({ threadId: "s1" }), true);
  for (const [body, error] of [["{", "Invalid stop request"], [JSON.stringify({ runId: 7 }), "Invalid runId"], [JSON.stringify({ runId: going.runId, more: 1 }), "Invalid stop request"]]) {
    const refused = await stop(body);
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), { error }); // as the runtime's own stop route answers
  }
  assert.equal(await ownCalls.isRunning({ threadId: "s1" }), true);
  const stopped = await stop(JSON.stringify({ runId: going.runId }));
  assert.deepEqual(await stopped.json(), STOPPED);
  assert.equal((await stream).at(-1).type, "RUN_FINISHED");
  assert.equal(await ownCalls.isRunning({ threadId: "s1" }), false);
  const again = await stop("");
  assert.deepEqual(await again.json(), { stopped: false, message: "No active run for thread 's1'." });
});

test("without the hooks, the runtime's stop route calls stop({ threadId, runId }), which stops only that run", async () => {
  const runner = new PyoxAgentRunner({ url: SERVER, headers: ANN });
  const copilotRuntime = new CopilotRuntime({ agents: { todo: new HttpAgent({ url: runner.agentUrl("todo") }) }, runner });
  const handler = createCopilotRuntimeHandler({ runtime: copilotRuntime, basePath: "/api/copilotkit" });
  const call = (path, init = {}) => handler(new Request(`${BASE}${path}`, init));
  const { ended, going, stream } = await endedThenGoing(call, "s2");
  const stop = (runId) => call("/agent/todo/stop/s2", { method: "POST", headers: json(ANN), body: JSON.stringify({ runId }) });
  assert.deepEqual(await (await stop(ended.runId)).json(), { stopped: false, message: `Run '${ended.runId}' is not the active run for thread 's2'.` });
  assert.equal(await runner.isRunning({ threadId: "s2" }), true);
  assert.deepEqual(await (await stop(going.runId)).json(), STOPPED);
  assert.equal((await stream).at(-1).type, "RUN_FINISHED");
  assert.equal(await runner.isRunning({ threadId: "s2" }), false);
});

test("in single-route mode, the hooks read the stop's runId in the runtime's envelope", async () => {
  const { call } = runtime();
  const { ended, going, stream } = await endedThenGoing(call, "s3");
  const runner = new PyoxAgentRunner({ url: SERVER });
  const copilotRuntime = new CopilotRuntime({ agents: { todo: new HttpAgent({ url: runner.agentUrl("todo") }) }, runner });
  const handler = createCopilotRuntimeHandler({ runtime: copilotRuntime, basePath: "/api/copilotkit", mode: "single-route", hooks: runner.hooks() });
  const stop = (runId) => handler(new Request(BASE, {
    method: "POST", headers: json(ANN),
    body: JSON.stringify({ method: "agent/stop", params: { agentId: "todo", threadId: "s3" }, body: { runId } }),
  }));
  assert.deepEqual(await (await stop(ended.runId)).json(), { stopped: false, message: `Run '${ended.runId}' is not the active run for thread 's3'.` });
  assert.deepEqual(await (await stop(going.runId)).json(), STOPPED);
  assert.equal((await stream).at(-1).type, "RUN_FINISHED");
});
