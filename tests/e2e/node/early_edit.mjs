// early_edit.mjs - a person's edit made while the page's agent connects to its thread, or before
// the thread's feed has brought its first version (clients/live-state's connectingAgent and
// followAgent on a real @ag-ui/client), against a real server whose answers reach the page
// late (a slow network): each connect's `lag` ms, the thread's feed twice that.
//
// Usage: node early_edit.mjs <base-url> '<json-options>'
//   options: threadId, client ('@ag-ui/client' or 'agui0059'), lag (ms).
//   1. A new thread: the page follows it (a LiveThread, waiting for the thread) and connects (as
//      CopilotKit does on mount); while the connect's answer is on its way, the person adds
//      "Call mom" (agent.setState); a run ("milk") starts the thread, and while it goes on,
//      before the feed has brought a version, the person adds "Call sis".
//   2. The page reloaded on that thread: a new agent and LiveThread; while the connect's answer
//      (read on the server before the edit) is on its way, the person adds "Call dad" on the
//      empty list the page shows; the connect ends before the feed's first version.
//   Then all goes quiet.
// Prints ONE JSON line: {newThread: {afterConnect, versionAtEdit}, reload:
//   {afterConnect, versionAfterConnect, quiet, thread}, server, errors}: the agent's state at
//   each point, the LiveThread's version when the person edited (or the connect ended), the
//   reloaded page's LiveThread state once quiet, and the thread's kept state (GET /threads/{id}).
import { format } from 'node:util';
import { LiveThread, followAgent } from '../../../clients/live-state/index.js';
import { connectingAgentClass } from './connecting_agent.mjs';

const [base, rawOptions = '{}'] = process.argv.slice(2);
if (!base) throw new Error('usage: early_edit.mjs <base-url> [json-options]');
const options = JSON.parse(rawOptions);
const { threadId, lag = 600 } = options;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));

const errors = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => errors.push(`${level}: ${format(...args)}`);
}

/** fetch, with each answer handed over `wait(url)` ms after it came. */
const slow = (wait) => async (url, init) => {
  const response = await fetch(url, init);
  await sleep(wait(String(url)));
  return response;
};
const connects = slow((url) => (url.endsWith('/connect') ? lag : 0));
const feeds = slow(() => 2 * lag);

const ConnectingAgent = await connectingAgentClass(options.client ?? '@ag-ui/client');
const page = (thread) => {
  const agent = new ConnectingAgent({
    url: `${base}/agents/todo/ag-ui`, threadId, initialState: { todos: [] },
    fetch: connects,
  });
  return { agent, unfollow: followAgent(thread, agent) };
};
const add = (agent, text) => agent.setState({ ...agent.state, todos: [...(agent.state.todos ?? []), { text, done: false }] });

/** Connect, and add `text` by hand while the answer is on its way. */
async function connectWhileEditing(agent, text) {
  const connected = agent.connectAgent();
  await sleep(lag / 3);
  add(agent, text);
  await connected;
  await sleep(50); // (what followAgent does once a connect ends, it does on the next turn)
  return copy(agent.state);
}

async function quiet(thread) {
  for (let i = 0; i < 200; i += 1) {
    if (thread.server.version != null && thread.pending === 0) return;
    await sleep(50);
  }
  throw new Error('the reloaded page did not go quiet');
}

const follow = () => {
  const thread = new LiveThread({ baseUrl: base, agent: 'todo', threadId, fetch: feeds });
  thread.start().catch((error) => errors.push(`feed: ${error.message}`));
  return thread;
};

// 1. a new thread (its LiveThread waits for the thread: the first run starts it)
const firstThread = follow();
const first = page(firstThread);
const newThread = { afterConnect: await connectWhileEditing(first.agent, 'Call mom') };
first.agent.addMessage({ id: 'm1', role: 'user', content: 'milk' });
const ran = first.agent.runAgent();
await sleep(50);
newThread.versionAtEdit = firstThread.server.version;
add(first.agent, 'Call sis');
await ran;
await quiet(firstThread);
first.unfollow();
firstThread.stop();

// 2. the same thread in a reloaded page
const thread = follow();
const second = page(thread);
const reload = { afterConnect: await connectWhileEditing(second.agent, 'Call dad') };
reload.versionAfterConnect = thread.server.version;
await quiet(thread);
await sleep(200);
reload.quiet = copy(second.agent.state);
reload.thread = copy(thread.state);
second.unfollow();
thread.stop();

const server = await (await fetch(`${base}/threads/${encodeURIComponent(threadId)}`)).json();
console.log(JSON.stringify({ newThread, reload, server: server.state, errors }));
