// live_state.mjs - @pyox-agents/live-state (clients/live-state) against a real server.
//
// Usage: node live_state.mjs tabs <base-url> '<json-options>'
//   options: threadId, client ('@ag-ui/client' or 'agui0059'), runs, seed, baseB (where tab b
//   and the observer connect: another server process on the same store; default base-url).
//   Two tabs (LiveThread "a" and "b") follow one thread; an HttpAgent kept in step with tab a
//   (followAgent) runs the server's `todo` agent `runs` times (each run adds one todo, slowly).
//   From the first run's end until the last run's end, both tabs make random edits (add, tick,
//   untick, delete, reorder as remove+add) on what they show. Tab b's feed is slow (each chunk
//   300 ms late, so it edits on stale versions) and cut every 1.5 s (it reconnects with
//   Last-Event-ID). The agent's page adds a todo with agent.setState after run 2 ("page-1")
//   and once all is quiet ("page-2"). A third LiveThread, the observer, records every version.
//   Then all waits for quiet.
//   Prints ONE JSON line: {tabs: {a, b: {state, version, pending, edits, refusals, reconnects,
//   resyncs}}, agentState, runs, runErrors, runRequests, server, history, errors}
//     edits: [{kind, id, done, madeOn, pendingThen, outcome: committed|refused, version, base,
//       stale, error, sentRight, appliedRight, applied: {removed: [ids], writes: [[id, done]]}}]
//       madeOn, pendingThen: the tab's version and pending edits when it made the edit;
//       sentRight: the ops as sent, read on version `base`, are for the todo `id`;
//       appliedRight: the server's delta, read on the version before `version`, is for it;
//       applied: what the delta did (null where the observer missed that version).
//     history: todo id -> [[version, done], ...] of every version the observer saw.
//   LIVE_STATE_DEBUG=1 adds each edit's ops, the ops sent, the delta, and `versions`.
//
// Usage: node live_state.mjs aisdk <base-url> '<json-options>'
//   options: chats ({plain, stripped}: chat ids), turns, blob (the size of a string in the
//   state). Two ai 7 Chats (DefaultChatTransport) send `turns` messages each, the first with a
//   state holding a `blob`-long string; "stripped" sends its messages through
//   stripOldStateParts (prepareSendMessagesRequest). Prints ONE JSON line:
//   {plain, stripped: {sizes, sentVersions, state, errors}}: each request's body size, the
//   data-state-version each request carried, the last data-state the chat holds (its blob's
//   length in place of the blob).
import { format } from 'node:util';
import { randomUUID } from 'node:crypto';
import * as ai from 'ai';
import { chatClass } from './node_chat.mjs';
import { LiveThread, applyOps, deepEqual, followAgent, stripOldStateParts } from '../../../clients/live-state/index.js';

const [mode, base, rawOptions = '{}'] = process.argv.slice(2);
if (!mode || !base) throw new Error('usage: live_state.mjs tabs|aisdk <base-url> [json-options]');
const options = JSON.parse(rawOptions);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));

const errors = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => errors.push(`${level}: ${format(...args)}`);
}

/** A seeded random source (mulberry32), so that a failure can be run again. */
function randomFrom(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), pick: (xs) => xs[Math.floor(next() * xs.length)] };
}

/** A fetch whose event streams come `lag` ms late and are cut `cutAfter` ms after they open. */
function slowFeedFetch({ lag, cutAfter, seen }) {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!String(url).includes('/events') || !response.ok) return response;
    seen.push({ lastEventId: new Headers(init?.headers).get('last-event-id') });
    const reader = response.body.getReader();
    const body = new ReadableStream({
      start(controller) {
        let closed = false;
        let chain = Promise.resolve();
        const finish = (end) => {
          if (closed) return;
          closed = true;
          clearTimeout(timer);
          end();
          reader.cancel().catch(() => {});
        };
        const timer = setTimeout(() => finish(() => controller.error(new TypeError('the network cut the stream (test)'))), cutAfter);
        init?.signal?.addEventListener('abort', () => finish(() => controller.error(new DOMException('aborted', 'AbortError'))));
        (async () => {
          try {
            while (true) {
              const { done, value } = await reader.read();
              if (done) break;
              const at = Date.now() + lag;
              chain = chain.then(() => sleep(at - Date.now())).then(() => { if (!closed) controller.enqueue(value); });
            }
            await chain;
            finish(() => controller.close());
          } catch {
            // cut or aborted
          }
        })();
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

async function tabs() {
  const rnd = randomFrom(options.seed ?? 1);
  const { HttpAgent } = await import(options.client ?? '@ag-ui/client');
  const threadId = options.threadId;
  const runs = options.runs ?? 4;

  const runRequests = [];
  const agent = new HttpAgent({
    url: `${base}/agents/todo/ag-ui`,
    threadId,
    initialState: { todos: [] },
    fetch: (url, init) => {
      const body = init?.body ? JSON.parse(init.body) : null;
      runRequests.push({ forwardedProps: body?.forwardedProps ?? {}, state: body?.state ?? null });
      return fetch(url, init);
    },
  });
  const feedB = [];
  const made = { a: [], b: [] };
  const refusals = { a: [], b: [] };
  const baseB = options.baseB ?? base; // tab b and the observer: another server process
  const tab = (name, extra = {}) => new LiveThread({
    baseUrl: base, agent: 'todo', threadId, onRefused: (r) => refusals[name].push(r), ...extra,
  });
  const threads = {
    a: tab('a'),
    b: tab('b', { baseUrl: baseB, fetch: slowFeedFetch({ lag: 300, cutAfter: 1500, seen: feedB }) }),
  };
  const observer = new LiveThread({ baseUrl: baseB, agent: 'todo', threadId });
  const history = new Map(); // version -> state, as the observer saw them
  observer.subscribe(({ version }) => { if (version != null) history.set(version, observer.server.state); });
  // the thread is not there until its first run starts it: the tabs wait for it (404)
  const started = Promise.all([threads.a.start(), threads.b.start(), observer.start()]);
  const unfollow = followAgent(threads.a, agent);

  const runErrors = [];
  let ran = 0;
  const run = async (n) => {
    agent.addMessage({ id: randomUUID(), role: 'user', content: `todo from run ${n}` });
    try {
      await agent.runAgent();
      ran++;
    } catch (e) {
      runErrors.push(String(e?.message ?? e));
    }
  };
  await run(1); // the thread's first version: the tabs edit from there
  await started;
  for (const name of ['a', 'b']) {
    const deadline = Date.now() + 10000;
    while (threads[name].version == null) {
      if (Date.now() > deadline) throw new Error(`tab ${name} never saw a version`);
      await sleep(10);
    }
  }

  let editing = true;
  const count = { a: 0, b: 0 };
  const editLoop = async (name) => {
    const thread = threads[name];
    while (editing) {
      await sleep(rnd.int(40, 220));
      const todos = thread.state.todos ?? [];
      const open = todos.map((t, i) => [t, i]).filter(([t]) => !t.done);
      const ticked = todos.map((t, i) => [t, i]).filter(([t]) => t.done);
      // Each kind first (in an order that makes each possible), then at random.
      const first = ['add', 'add', 'tick', 'untick', 'reorder', 'delete'][made[name].length];
      let kind = first ?? rnd.pick(['add', 'add', 'add', 'tick', 'tick', 'untick', 'delete', 'delete', 'reorder', 'reorder']);
      if ((kind === 'tick' && !open.length) || (kind === 'untick' && !ticked.length) ||
          ((kind === 'delete' || kind === 'reorder') && todos.length < 2)) kind = 'add';
      let ops;
      let record;
      if (kind === 'add') {
        const id = `${name}-${++count[name]}`;
        const path = rnd.next() < 0.5 ? '/todos/-' : `/todos/${rnd.int(0, todos.length)}`;
        ops = [{ op: 'add', path, value: { id, text: `from tab ${name}`, done: false } }];
        record = { kind, id, done: false };
      } else if (kind === 'tick' || kind === 'untick') {
        const [t, i] = rnd.pick(kind === 'tick' ? open : ticked);
        ops = [{ op: 'replace', path: `/todos/${i}/done`, value: kind === 'tick' }];
        record = { kind, id: t.id, done: kind === 'tick' };
      } else if (kind === 'delete') {
        const i = rnd.int(0, todos.length - 1);
        ops = [{ op: 'remove', path: `/todos/${i}` }];
        record = { kind, id: todos[i].id };
      } else {
        const i = rnd.int(0, todos.length - 1);
        let j = rnd.int(0, todos.length - 2);
        if (j >= i) j++;
        ops = [{ op: 'remove', path: `/todos/${i}` }, { op: 'add', path: `/todos/${j}`, value: todos[i] }];
        record = { kind, id: todos[i].id, done: todos[i].done };
      }
      record.outcome = 'pending';
      record.ops = ops;
      record.madeOn = thread.version;
      record.view = todos.map((t) => t.id).join(' ');
      record.pendingThen = thread.pending;
      made[name].push(record);
      thread.edit(ops).then((r) => {
        record.outcome = r.ok ? 'committed' : 'refused';
        record.version = r.version;
        record.base = r.base;
        record.delta = r.delta ?? null;
        record.sent = r.ops;
        record.stale = Boolean(r.ok && r.delta?.length && r.version > r.base + 1);
        record.error = r.error ?? null;
      });
    }
  };
  const loops = [editLoop('a'), editLoop('b')];
  // The agent's page edits too, as a CopilotKit page does: agent.setState (followAgent makes
  // it an edit of the thread).
  const pageAdd = (id) => {
    const todos = agent.state.todos ?? [];
    agent.setState({ ...agent.state, todos: [...todos, { id, text: 'from the agent page', done: false }] });
  };
  for (let n = 2; n <= runs; n++) {
    await sleep(rnd.int(50, 400));
    await run(n);
    if (n === 2) {
      await sleep(50); // followAgent's sync after the run
      pageAdd('page-1');
    }
  }
  await sleep(500);
  editing = false;
  await Promise.all(loops);

  // Quiet: every edit answered and shown, every tab at the server's latest version.
  let latest;
  const quiet = async () => {
    await Promise.all([threads.a.flush(), threads.b.flush()]);
    const deadline = Date.now() + 15000;
    while (true) {
      latest = await (await fetch(`${base}/threads/${threadId}`)).json();
      const all = [threads.a, threads.b, observer];
      if (!latest.running && all.every((t) => t.version === latest.version && !t.running && t.pending === 0)) break;
      if (Date.now() > deadline) {
        errors.push(`not quiet: server ${latest.version}, tabs ${all.map((t) => t.version)}`);
        break;
      }
      await sleep(50);
    }
    await sleep(100); // followAgent's sync
  };
  await quiet();
  pageAdd('page-2');
  await sleep(50);
  await quiet();
  for (const t of [threads.a, threads.b, observer]) t.stop();
  unfollow();

  // Each committed edit: was it sent for its todo (its ops read on the version it was sent
  // on), did the server apply it to that todo (its delta read on the version before it), and
  // what it did as applied (the todos it removed, the `done` values it wrote).
  const at = (state, path) => {
    const m = /^\/todos\/([0-9]+)/.exec(path ?? '');
    return m ? state?.todos?.[Number(m[1])] : undefined;
  };
  const aimsAt = (record, ops, before) => {
    const [first, second] = ops;
    if (record.kind === 'add') return first.op === 'add' && first.value?.id === record.id;
    if (record.kind === 'delete') return first.op === 'remove' && at(before, first.path)?.id === record.id;
    if (record.kind === 'reorder') {
      return first.op === 'remove' && at(before, first.path)?.id === record.id &&
        second?.op === 'add' && second.value?.id === record.id;
    }
    return first.op === 'replace' && /\/done$/.test(first.path) && at(before, first.path)?.id === record.id;
  };
  const appliedBy = (ops, before) => {
    let state = before;
    const removed = [];
    const writes = [];
    for (const op of ops) {
      if (op.op === 'remove') removed.push(at(state, op.path)?.id);
      if (op.op === 'replace' && /\/done$/.test(op.path)) writes.push([at(state, op.path)?.id, op.value]);
      if (op.op === 'add') writes.push([op.value?.id, op.value?.done]);
      state = applyOps(state, [op]);
    }
    return { removed, writes };
  };
  for (const record of [...made.a, ...made.b]) {
    if (record.outcome !== 'committed') continue;
    const sentOn = history.get(record.base);
    record.sentRight = sentOn ? aimsAt(record, record.sent, sentOn) : null;
    const before = history.get(record.version - 1);
    const made = history.get(record.version);
    let changed = record.delta.length > 0;
    if (changed && before && made) { // its delta made version `version` (a server answers an
      try { //                          edit that changed nothing with the latest version)
        changed = deepEqual(applyOps(before, record.delta), made);
      } catch {
        changed = false;
      }
    }
    if (!changed) { // it changed nothing: right for a tick of a ticked todo only
      record.appliedRight = record.kind === 'tick' || record.kind === 'untick';
      record.applied = { removed: [], writes: [] };
      continue;
    }
    record.appliedRight = before ? aimsAt(record, record.delta, before) : null;
    record.applied = before ? appliedBy(record.delta, before) : null;
  }
  const trace = {};
  for (const [version, state] of [...history.entries()].sort((x, y) => x[0] - y[0])) {
    for (const t of state.todos ?? []) (trace[t.id] ??= []).push([version, t.done]);
  }

  const tabOut = (name) => ({
    state: copy(threads[name].state),
    version: threads[name].version,
    pending: threads[name].pending,
    edits: made[name].map(({ delta, sent, ops, view, ...rest }) => (process.env.LIVE_STATE_DEBUG ? { delta, sent, ops, view, ...rest } : rest)),
    refusals: refusals[name].map((r) => ({ error: r.error, status: r.status, version: r.version })),
    reconnects: name === 'b' ? feedB.filter((f) => f.lastEventId).length : 0,
    resyncs: threads[name].resyncs,
  });
  return {
    tabs: { a: tabOut('a'), b: tabOut('b') },
    agentState: copy(agent.state),
    runs: ran,
    runErrors,
    runRequests,
    history: trace,
    server: latest,
    ...(process.env.LIVE_STATE_DEBUG && {
      versions: Object.fromEntries([...history.entries()].map(([v, s]) => [v, (s.todos ?? []).map((t) => `${t.id}${t.done ? '+' : ''}`).join(' ')])),
      made: { a: made.a.map((r) => ({ ...r })), b: made.b.map((r) => ({ ...r })) },
    }),
    errors,
  };
}

const NodeChat = chatClass(ai);

async function chatTurns(id, strip) {
  const sizes = [];
  const sentVersions = [];
  const chatErrors = [];
  const transport = new ai.DefaultChatTransport({
    api: `${base}/agents/todo/ai-sdk`,
    fetch: (url, init) => {
      sizes.push(init.body.length);
      const body = JSON.parse(init.body);
      const versions = body.messages.flatMap((m) => m.parts).filter((p) => p.type === 'data-state-version');
      sentVersions.push(versions.at(-1)?.data?.version ?? null);
      return fetch(url, init);
    },
    ...(strip && {
      prepareSendMessagesRequest: ({ id: chatId, messages, body, trigger, messageId }) => ({
        body: { ...body, id: chatId, messages: stripOldStateParts(messages), trigger, messageId },
      }),
    }),
  });
  const chat = new NodeChat({ id, transport, onError: (e) => chatErrors.push(String(e?.message ?? e)) });
  for (let turn = 1; turn <= options.turns; turn++) {
    const extra = turn === 1 ? { body: { state: { todos: [], blob: 'x'.repeat(options.blob) } } } : undefined;
    await chat.sendMessage({ text: `todo ${turn}` }, extra);
  }
  const parts = chat.messages.flatMap((m) => m.parts);
  const { blob, ...state } = parts.filter((p) => p.type === 'data-state').at(-1)?.data ?? {};
  return { sizes, sentVersions, state: { ...state, blob: blob?.length ?? null }, errors: chatErrors };
}

async function aisdk() {
  const out = {};
  for (const [name, id] of Object.entries(options.chats)) out[name] = await chatTurns(id, name === 'stripped');
  return { ...out, errors };
}

const result = mode === 'tabs' ? await tabs() : await aisdk();
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
