// agui_connect.mjs - a page that comes back to a thread: the demo's ConnectingAgent
// (frontend-demo/src/shared/ConnectingAgent.ts, compiled here with frontend-demo's TypeScript)
// on a real @ag-ui/client, calling connectAgent() as CopilotKit does after a reload.
//
// Usage: node agui_connect.mjs <run url> '<json-options>'
//   options: client ('@ag-ui/client' 1.0, or 'agui0059' 0.0.59), threadId, headers
// Prints ONE JSON line: {resolved, error, events, warnings, messages, state, request, url}.
import { format } from 'node:util';
import { connectingAgentClass } from './connecting_agent.mjs';

const [url, rawOptions = '{}'] = process.argv.slice(2);
if (!url) throw new Error('usage: agui_connect.mjs <url> [json-options]');
const options = JSON.parse(rawOptions);
const client = options.client ?? '@ag-ui/client';
const ConnectingAgent = await connectingAgentClass(client);

const warnings = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => warnings.push(`${level}: ${format(...args)}`);
}
let request = null;
let requested = null;
const recordingFetch = async (input, init) => {
  requested = String(input);
  request = init?.body ? JSON.parse(init.body) : null;
  return fetch(input, init);
};
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));

const agent = new ConnectingAgent({ url, threadId: options.threadId, headers: options.headers,
                                    fetch: recordingFetch });
const events = [];
let resolved = true;
let error = null;
try {
  await agent.connectAgent({}, { onEvent: ({ event }) => { events.push(copy(event)); } });
} catch (e) {
  resolved = false;
  error = String(e?.message ?? e);
}
process.stdout.write(`${JSON.stringify({
  resolved, error, events, warnings, messages: copy(agent.messages), state: copy(agent.state),
  request, url: requested,
})}\n`);
