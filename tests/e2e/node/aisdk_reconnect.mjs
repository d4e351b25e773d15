// aisdk_reconnect.mjs - a useChat page that goes away mid-run and comes back, with the real `ai`.
//
// Usage: node aisdk_reconnect.mjs <api-url> '<json-options>'
//   options: chatId, initialState, first, edit, second, release (as agui_reconnect.mjs).
// 1. sendMessage(first) with body {state: initialState}; chat.stop() once a tool part is
//    'input-available' (the page went away);
// 2. GET `release` (the server's run goes on without the page and commits);
// 3. sendMessage(second) with body {state: {...the last data-state part it holds, ...edit}}:
//    the older state with the person's edit, the data-state part echoed in its messages.
// Prints ONE JSON line: {version, seen, status, error, errors, state, body}
//   seen: the data-state part's data when the page went away; state: the data-state part's data
//   at the end; body: the second request's body.
import { createRequire } from 'node:module';
import * as ai from 'ai';
import { chatClass } from './node_chat.mjs';

const [api, rawOptions = '{}'] = process.argv.slice(2);
if (!api) throw new Error('usage: aisdk_reconnect.mjs <api-url> [json-options]');
const options = JSON.parse(rawOptions);
const version = createRequire(import.meta.url)('ai/package.json').version;
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const NodeChat = chatClass(ai);

let body = null;
const errors = [];
const chat = new NodeChat({
  id: options.chatId,
  transport: new ai.DefaultChatTransport({
    api,
    fetch: (url, init) => { body = init?.body ? JSON.parse(init.body) : null; return fetch(url, init); },
  }),
  onError: (e) => errors.push(String(e?.message ?? e)),
});
const parts = () => chat.messages.flatMap((m) => m.parts);
const lastState = () => copy(parts().filter((p) => p.type === 'data-state').at(-1)?.data);

const first = chat.sendMessage({ text: options.first }, { body: { state: options.initialState } });
const deadline = Date.now() + 20000;
while (!parts().some((p) => p.type.startsWith('tool-') && p.state === 'input-available')) {
  if (Date.now() > deadline) throw new Error(`no tool call arrived: ${JSON.stringify(chat.messages)}`);
  await sleep(10);
}
await chat.stop();
await first;
const seen = lastState();
const released = await fetch(options.release);
if (!released.ok) throw new Error(`release answered ${released.status}`);

await chat.sendMessage({ text: options.second }, { body: { state: { ...seen, ...options.edit } } });
process.stdout.write(`${JSON.stringify({ version, seen, status: chat.status, error: chat.error ? String(chat.error.message ?? chat.error) : null, errors, state: lastState(), body })}\n`);
