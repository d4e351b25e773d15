// gapless.mjs - a client whose connection is cut mid-run, and that resumes after the last
// frame it got (its SSE `id:`), the way a user writes it: the real clients do not read `id:`
// lines, so the page's `fetch` notes the id of each frame it hands them.
//
// Usage: node gapless.mjs <mode> <url> '<json-options>'
//   aisdk  <api url>        options: chatId, text. An ai 7 Chat (DefaultChatTransport with
//          `resumeStreamIsReplay: false`, its `prepareReconnectToStreamRequest` adding
//          `Last-Event-ID`) sends `text`; once the request fails, `chat.resumeStream()`.
//   agui   <run url>        options: threadId, text. @ag-ui/client's HttpAgent (with the
//          `connect` of clients/live-state's connectingAgent) runs; once the run fails,
//          `connectAgent()` with `Last-Event-ID` in its headers.
//   feed   <base url>       options: threadId, ready (a file written once the feed's first
//          snapshot came), until (the number of run_finished items to wait for). A LiveThread
//          (clients/live-state) follows the thread; it reconnects with Last-Event-ID itself.
// Prints ONE JSON line: {frames: [[connection, id, data]], connections, ...the mode's results}
//   frames: every whole frame the client was handed, in order (a frame the cut split in two is
//   never handed whole, so the client never reads it).
import { chatClass } from './node_chat.mjs';
import { writeFileSync } from 'node:fs';
import { format } from 'node:util';
import { randomUUID } from 'node:crypto';

const [mode, url, rawOptions = '{}'] = process.argv.slice(2);
if (!mode || !url) throw new Error('usage: gapless.mjs aisdk|agui|feed <url> [json-options]');
const options = JSON.parse(rawOptions);
const warnings = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => warnings.push(`${level}: ${format(...args)}`);
}
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
// @ag-ui/client's HttpAgent cancels the body's reader when a run fails, and rethrows what that
// cancel rejects with (the dropped connection's error, which the run already reported): in a
// browser, an unhandled rejection in the console; in Node, the process's end unless handled.
const unhandled = [];
process.on('unhandledRejection', (reason) => unhandled.push(String(reason?.message ?? reason)));

const frames = [];
let lastId = null;
let connections = 0;

/** `body`, its frames noted as they go by (each whole frame's id and data), and a dropped
 * connection reported as a browser's fetch reports one (`TypeError: network error`; Node's
 * says "terminated", which `ai` does not take for a disconnect it can resume from). */
function noted(body) {
  const connection = ++connections;
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  return new ReadableStream({
    async pull(controller) {
      let read;
      try {
        read = await reader.read();
      } catch {
        controller.error(new TypeError('network error'));
        return;
      }
      if (read.done) {
        controller.close();
        return;
      }
      buffer += decoder.decode(read.value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id = null;
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (id !== null) lastId = id;
        if (data.length) frames.push([connection, id, data.join('\n')]);
      }
      controller.enqueue(read.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

async function notingFetch(input, init) {
  const response = await fetch(input, init);
  if (!response.body || response.status === 204) return response;
  return new Response(noted(response.body), { status: response.status, headers: response.headers });
}

const results = { aisdk, agui, feed }[mode];
if (!results) throw new Error(`unknown mode ${mode}`);
const out = await results();
process.stdout.write(`${JSON.stringify({ frames, connections, lastId, warnings, unhandled, ...out })}\n`);

async function aisdk() {
  const ai = await import('ai');
  const NodeChat = chatClass(ai);
  const errors = [];
  const chat = new NodeChat({
    id: options.chatId,
    transport: new ai.DefaultChatTransport({
      api: url,
      fetch: notingFetch,
      resumeStreamIsReplay: false, // the server sends only what follows Last-Event-ID
      prepareReconnectToStreamRequest: ({ api, id, headers }) => ({
        api: `${api}/${encodeURIComponent(id)}/stream`,
        headers: { ...headers, ...(lastId ? { 'Last-Event-ID': lastId } : {}) },
      }),
    }),
    onError: (e) => errors.push(String(e?.message ?? e)),
  });
  await chat.sendMessage({ text: options.text });
  const statusAfterCut = chat.status;
  await chat.resumeStream();
  return { statusAfterCut, status: chat.status, errors, messages: copy(chat.messages) };
}

async function agui() {
  const { HttpAgent, runHttpRequest, transformHttpEventStream } = await import('@ag-ui/client');
  const { connectingAgent } = await import('../../../clients/live-state/index.js');
  const ConnectingAgent = connectingAgent(HttpAgent, { runHttpRequest, transformHttpEventStream });
  const agent = new ConnectingAgent({ url, threadId: options.threadId, fetch: notingFetch });
  agent.addMessage({ id: randomUUID(), role: 'user', content: options.text });
  const events = [];
  let runError = null;
  try {
    await agent.runAgent({}, { onEvent: ({ event }) => void events.push([1, copy(event)]) });
  } catch (e) {
    runError = String(e?.message ?? e);
  }
  agent.headers = { ...agent.headers, ...(lastId ? { 'Last-Event-ID': lastId } : {}) };
  let connectError = null;
  try {
    await agent.connectAgent({}, { onEvent: ({ event }) => void events.push([2, copy(event)]) });
  } catch (e) {
    connectError = String(e?.message ?? e);
  }
  return { runError, connectError, events, messages: copy(agent.messages), state: copy(agent.state) };
}

async function feed() {
  const { LiveThread } = await import('../../../clients/live-state/index.js');
  const errors = [];
  const thread = new LiveThread({ baseUrl: url, agent: 'paced', threadId: options.threadId, fetch: notingFetch,
                                  onError: (e) => errors.push(String(e?.message ?? e)) });
  await thread.start();
  writeFileSync(options.ready, 'ready');
  const finished = () => frames.filter(([, , data]) => data.includes('"run_finished"')).length;
  const deadline = Date.now() + 20000;
  while (finished() < options.until && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  thread.stop();
  return { errors, state: copy(thread.state), version: thread.version, resyncs: thread.resyncs };
}
