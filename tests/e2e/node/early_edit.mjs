// early_edit.mjs - a person's edit made while the page's agent connects to its thread
// (clients/live-state's connectingAgent and followAgent on a real @ag-ui/client), against a
// real server whose answers reach the page `lag` ms late (a slow network).
//
// Usage: node early_edit.mjs <base-url> '<json-options>'
//   options: threadId, client ('@ag-ui/client' or 'agui0059'), lag (ms).
//   1. A new thread: the page connects (as CopilotKit does on mount); while the answer is on
//      its way, the person adds "Call mom" (agent.setState); then a run ("milk") starts the
//      thread.
//   2. The page reloaded on that thread: a new agent and LiveThread, the thread's feed and the
//      connect's answer (read on the server before the edit) both late; while they are on their
//      way, the person adds "Call dad" on the empty list the page shows. Then all goes quiet.
// Prints ONE JSON line: {newThread: {afterConnect, afterRun}, reload: {afterConnect, quiet,
//   thread}, server, errors}: the agent's state at each point, the reloaded LiveThread's state
//   once quiet, and the thread's kept state (GET /threads/{id}).
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

/** fetch, with the answers of the requests `late(url)` picks handed over `lag` ms after they came. */
const slow = (late) => async (url, init) => {
  const response = await fetch(url, init);
  if (late(String(url))) await sleep(lag);
  return response;
};

const ConnectingAgent = await connectingAgentClass(options.client ?? '@ag-ui/client');
const page = (thread) => {
  const agent = new ConnectingAgent({
    url: `${base}/agents/todo/ag-ui`, threadId, initialState: { todos: [] },
    fetch: slow((url) => url.endsWith('/connect')),
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

// 1. a new thread (its LiveThread is not started: the server has no thread to follow yet)
const first = page(new LiveThread({ baseUrl: base, agent: 'todo', threadId }));
const newThread = { afterConnect: await connectWhileEditing(first.agent, 'Call mom') };
first.agent.addMessage({ id: 'm1', role: 'user', content: 'milk' });
await first.agent.runAgent();
newThread.afterRun = copy(first.agent.state);
first.unfollow();

// 2. the same thread in a reloaded page
const thread = new LiveThread({ baseUrl: base, agent: 'todo', threadId, fetch: slow(() => true) });
thread.start().catch((error) => errors.push(`feed: ${error.message}`));
const second = page(thread);
const reload = { afterConnect: await connectWhileEditing(second.agent, 'Call dad') };
await quiet(thread);
await sleep(200);
reload.quiet = copy(second.agent.state);
reload.thread = copy(thread.state);
second.unfollow();
thread.stop();

const server = await (await fetch(`${base}/threads/${encodeURIComponent(threadId)}`)).json();
console.log(JSON.stringify({ newThread, reload, server: server.state, errors }));
