// aisdk_chat.mjs - drive an AI SDK "UI message stream" endpoint with the real `ai` client code.
//
// Usage: node aisdk_chat.mjs <api-url> '<json-options>'
//   options (all optional):
//     major: 7 | 6 | 5          which `ai` major (7 = package `ai`, 6/5 = npm aliases `ai6`/`ai5`)
//     chatId                    chat id (default: random); also the resume GET's id
//     body                      DefaultChatTransport({body}) extras, e.g. {state: {...}}
//     headers                   DefaultChatTransport({headers})
//     initialMessages           UIMessage[] the chat starts with
//     messages: [ "text" | {text?, approvals?, toolOutputs?} ]
//        each is sent with chat.sendMessage({text}) and awaited; then
//        approvals:   [{approved, reason?, id?}]  -> chat.addToolApprovalResponse (ai 6/7 only);
//                     a missing id answers the next part in state 'approval-requested'
//        toolOutputs: [{toolCallId?, tool?, output?, errorText?}] -> chat.addToolOutput
//                     (a missing toolCallId/tool takes the next part in state 'input-available')
//        after answering, the continuation request is sent the useChat way:
//        sendAutomaticallyWhen (default) or, with continueWith: "sendMessage", chat.sendMessage().
//     onToolCall: {tool: output}  the page runs these tools itself: useChat's onToolCall calls
//                               addToolOutput (not awaited, as the docs say); the continuation
//                               goes by sendAutomaticallyWhen
//     stopAfterChunks: n        call chat.stop() once n chunks arrived (a page closed mid-stream)
//     resume: true              then a FRESH chat with the same id (a page reload) calls
//                               resumeStream() -> GET <api>/<chatId>/stream
//     resumeMessages            messages of the fresh chat (default: the first chat's user messages)
//     resumeStreamIsReplay      passed to DefaultChatTransport (ai 6/7) when given
//     settleMs                  max wait for an automatic continuation (default 10000)
// Prints ONE JSON line:
//   {major, version, chatId, status, error, messages, dataEvents, chunkErrors, chunks, requests,
//    finishes, errors, resume: null | {the same fields for the resumed chat}}
//   chunks:      every SSE data chunk of every response, in order (each also validated)
//   chunkErrors: {kind:'schema'|'process'|'stream', request, index?, chunk?, error}
//   requests:    {method, url, body, status, contentType, protocolHeader, errorBody?, chunkCount}
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { chatClass } from './node_chat.mjs';

const [api, rawOptions = '{}'] = process.argv.slice(2);
if (!api) throw new Error('usage: aisdk_chat.mjs <api-url> [json-options]');
const options = JSON.parse(rawOptions);
const major = Number(options.major ?? 7);
const pkg = { 7: 'ai', 6: 'ai6', 5: 'ai5' }[major];
if (!pkg) throw new Error(`unsupported major ${options.major}`);
const ai = await import(pkg);
const version = createRequire(import.meta.url)(`${pkg}/package.json`).version;
const chatId = options.chatId ?? `chat-${randomUUID()}`;
const settleMs = options.settleMs ?? 10000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
const errText = (e) => String(e?.message ?? e);

// uiMessageChunkSchema is exported by ai 5, 6 and 7 (the schema the transport itself applies).
if (!ai.uiMessageChunkSchema) throw new Error(`${pkg}@${version} does not export uiMessageChunkSchema`);

const NodeChat = chatClass(ai); // (a minimal ChatState, like @ai-sdk/react's Chat)

// Continue automatically once every approval / client tool output is in (what apps pass to useChat).
const autoSend = (o) =>
  Boolean(ai.lastAssistantMessageIsCompleteWithApprovalResponses?.(o)) ||
  Boolean(ai.lastAssistantMessageIsCompleteWithToolCalls?.(o));

// Everything observed for one chat instance.
function newRecord() {
  return { chunks: [], chunkErrors: [], requests: [], dataEvents: [], finishes: [], errors: [], pending: [] };
}

// Check one response body independently of the chat: every SSE event against uiMessageChunkSchema
// (parseJsonEventStream, as DefaultChatTransport does), and the valid chunks through
// readUIMessageStream, which reports ordering errors (text-delta without text-start, ...) and,
// like the chat, stops folding at the first one. Schema validation still covers every chunk.
async function inspect(body, req, reqIndex, rec, continued, onChunk) {
  let feed;
  const valid = new ReadableStream({ start: (c) => (feed = c) });
  const processError = (e) => rec.chunkErrors.push({ kind: 'process', request: reqIndex, error: errText(e) });
  const folding = (async () => {
    let errors = 0;
    try {
      const message = continued ? structuredClone(continued) : undefined;
      const onError = (e) => (errors += 1, processError(e));
      for await (const _ of ai.readUIMessageStream({ stream: valid, message, onError }));
    } catch (e) {
      if (!errors) processError(e);
    }
  })();
  const enqueue = (v) => {
    try {
      feed.enqueue(v);
    } catch {} // folding already stopped at an error
  };
  try {
    for await (const r of ai.parseJsonEventStream({ stream: body, schema: ai.uiMessageChunkSchema })) {
      const index = rec.chunks.length;
      req.chunkCount += 1;
      if (r.success) {
        rec.chunks.push(copy(r.value));
        enqueue(r.value);
      } else {
        rec.chunks.push(copy(r.rawValue));
        rec.chunkErrors.push({ kind: 'schema', request: reqIndex, index, chunk: copy(r.rawValue), error: errText(r.error) });
      }
      onChunk?.();
    }
  } catch (e) {
    // The connection dropped or was aborted (e.g. stopAfterChunks).
    rec.chunkErrors.push({ kind: 'stream', request: reqIndex, error: errText(e) });
  }
  try {
    feed.close();
  } catch {}
  await folding;
}

// fetch for DefaultChatTransport: records each request and tees 2xx bodies into inspect().
function recordingFetch(rec, onChunk) {
  return async (url, init = {}) => {
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : null;
    const res = await fetch(url, init);
    const req = {
      method: init.method ?? 'GET',
      url: String(url),
      body,
      status: res.status,
      contentType: res.headers.get('content-type'),
      protocolHeader: res.headers.get('x-vercel-ai-ui-message-stream'),
      chunkCount: 0,
    };
    const reqIndex = rec.requests.push(req) - 1;
    if (!res.ok) req.errorBody = await res.clone().text();
    if (!res.ok || !res.body || res.status === 204) return res;
    // A continuation (approval / tool output) writes into the last assistant message it sent.
    const last = body?.messages?.at(-1);
    const continued = last?.role === 'assistant' ? last : undefined;
    const [mine, theirs] = res.body.tee();
    rec.pending.push(inspect(mine, req, reqIndex, rec, continued, onChunk));
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

function makeChat(messages, rec, onChunk) {
  const transportOptions = { api, body: options.body, headers: options.headers, fetch: recordingFetch(rec, onChunk) };
  if (options.resumeStreamIsReplay !== undefined) transportOptions.resumeStreamIsReplay = options.resumeStreamIsReplay;
  let self;
  const runs = options.onToolCall ?? {};
  const onToolCall = ({ toolCall }) => {
    if (!(toolCall.toolName in runs)) return;
    void self.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: runs[toolCall.toolName] });
  };
  return (self = new NodeChat({
    ...(options.onToolCall && { onToolCall }),
    id: chatId,
    messages,
    transport: new ai.DefaultChatTransport(transportOptions),
    // onData gets every data-* chunk (transient ones too); copy: the part object is mutated later.
    onData: (part) => rec.dataEvents.push(copy(part)),
    onError: (e) => rec.errors.push(errText(e)),
    onFinish: ({ message, isError, isAbort, isDisconnect, finishReason }) =>
      rec.finishes.push({ messageId: message?.id ?? null, isError, isAbort, isDisconnect, finishReason }),
    ...(options.continueWith !== 'sendMessage' && { sendAutomaticallyWhen: autoSend }),
  }));
}

// Wait until the automatic continuation (sendAutomaticallyWhen) has run; if no request starts
// within 300 ms, none was due (e.g. an approval is still unanswered).
async function settle(chat, rec, requestsBefore) {
  const started = Date.now();
  while (Date.now() - started < settleMs) {
    const busy = chat.status === 'submitted' || chat.status === 'streaming';
    if (!busy && (rec.requests.length > requestsBefore || Date.now() - started > 300)) return;
    await sleep(20);
  }
}

// The first tool part (in any message) matching pred.
const isToolPart = (p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool';
const nextPart = (chat, pred) => chat.messages.flatMap((m) => m.parts).find((p) => isToolPart(p) && pred(p));

async function finish(chat, rec) {
  await Promise.all(rec.pending);
  const { pending, ...fields } = rec;
  return { status: chat.status, error: chat.error ? errText(chat.error) : null, messages: copy(chat.messages), ...fields };
}

// 1) The conversation, exactly as a useChat page would run it.
const rec = newRecord();
let chat;
let chunksSeen = 0;
const stopper = () => {
  chunksSeen += 1;
  if (options.stopAfterChunks && chunksSeen === options.stopAfterChunks) void chat.stop();
};
chat = makeChat(copy(options.initialMessages ?? []), rec, stopper);
for (const step of options.messages ?? []) {
  const turn = typeof step === 'string' ? { text: step } : step;
  if (turn.text !== undefined) await chat.sendMessage({ text: turn.text });
  if (options.onToolCall) await settle(chat, rec, rec.requests.length);
  if (!turn.approvals?.length && !turn.toolOutputs?.length) continue;
  const before = rec.requests.length;
  for (const a of turn.approvals ?? []) {
    if (!chat.addToolApprovalResponse) throw new Error(`ai ${version} has no addToolApprovalResponse (tool approvals need ai 6+)`);
    const id = a.id ?? nextPart(chat, (p) => p.state === 'approval-requested')?.approval?.id;
    await chat.addToolApprovalResponse({ id, approved: a.approved, ...(a.reason !== undefined && { reason: a.reason }) });
  }
  for (const t of turn.toolOutputs ?? []) {
    const part = nextPart(chat, (p) => (t.toolCallId ? p.toolCallId === t.toolCallId : p.state === 'input-available'));
    const tool = t.tool ?? part?.toolName ?? part?.type.replace(/^tool-/, '');
    const args = { tool, toolCallId: t.toolCallId ?? part?.toolCallId };
    if (t.errorText !== undefined) Object.assign(args, { state: 'output-error', errorText: t.errorText });
    else args.output = t.output;
    await (chat.addToolOutput ?? chat.addToolResult).call(chat, args);
  }
  if (options.continueWith === 'sendMessage') await chat.sendMessage();
  else await settle(chat, rec, before);
}
const report = { major, version, chatId, ...(await finish(chat, rec)), resume: null };

// 2) A page reload: a fresh chat with the same id asks GET <api>/<chatId>/stream.
if (options.resume) {
  const rrec = newRecord();
  const resumed = makeChat(copy(options.resumeMessages ?? report.messages.filter((m) => m.role === 'user')), rrec);
  await resumed.resumeStream();
  report.resume = await finish(resumed, rrec);
}

process.stdout.write(`${JSON.stringify(report)}\n`);
