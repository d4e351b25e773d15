// agui_reconnect.mjs - a page that goes away mid-run and comes back, with the real HttpAgent.
//
// Usage: node agui_reconnect.mjs <url> '<json-options>'
//   options: threadId, initialState, first (the first message), edit (keys the person sets in
//   the state while away), second (the message sent on coming back), release (a URL the script
//   GETs once it has left the first run: the test lets that run finish detached, then answers).
// 1. runAgent() with `first`; abortRun() as soon as TOOL_CALL_END arrives (the page went away);
// 2. GET `release` (the server's run goes on without the page and commits);
// 3. setState({...agent.state, ...edit}) (the person's edit on the version the page had);
// 4. runAgent() with `second` on the SAME agent: it sends its older state with the edit.
// Prints ONE JSON line: {seen, resolved, error, warnings, state, request, snapshots}
//   seen: agent.state when the page went away; request: the second RunAgentInput;
//   snapshots: every STATE_SNAPSHOT of the second run.
import { format } from 'node:util';
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';

const [url, rawOptions = '{}'] = process.argv.slice(2);
if (!url) throw new Error('usage: agui_reconnect.mjs <url> [json-options]');
const options = JSON.parse(rawOptions);
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));

const warnings = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => warnings.push(`${level}: ${format(...args)}`);
}
let request = null;
const recordingFetch = async (input, init) => {
  request = init?.body ? JSON.parse(init.body) : null;
  return fetch(input, init);
};

const agent = new HttpAgent({
  url,
  threadId: options.threadId,
  initialState: options.initialState,
  fetch: recordingFetch,
});

agent.addMessage({ id: randomUUID(), role: 'user', content: options.first });
try {
  await agent.runAgent({}, { onToolCallEndEvent: () => agent.abortRun() });
} catch {
  // an aborted run may reject: the page went away, which is the point
}
const seen = copy(agent.state);
const released = await fetch(options.release);
if (!released.ok) throw new Error(`release answered ${released.status}`);

agent.setState({ ...agent.state, ...options.edit });
agent.addMessage({ id: randomUUID(), role: 'user', content: options.second });
const snapshots = [];
let resolved = true;
let error = null;
warnings.length = 0;
try {
  await agent.runAgent({}, { onStateSnapshotEvent: ({ event }) => void snapshots.push(copy(event.snapshot)) });
} catch (e) {
  resolved = false;
  error = String(e?.message ?? e);
}
process.stdout.write(`${JSON.stringify({ seen, resolved, error, warnings, state: copy(agent.state), request, snapshots })}\n`);
