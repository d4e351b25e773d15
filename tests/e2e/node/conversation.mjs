// conversation.mjs - one conversation with a real client, the way a page drives it: messages,
// regenerates, edits, messages typed over a pending approval or question, answers, reloads.
// After every step it reads the thread the server keeps (GET <base>/threads/<id>), so a test
// can hold the two side by side.
//
// Usage: node conversation.mjs <base-url> '<json-options>'
//   options: agent (its name, default "shop"), threadId, client:
//     "ai7"          `ai` 7's AbstractChat (what useChat wraps) + DefaultChatTransport, the whole
//                    history in every request; approvals answered with addToolApprovalResponse
//                    and sent on by sendAutomaticallyWhen (lastAssistantMessageIsComplete...);
//     "ai7-newest"   the same with the AI SDK's persistence recipe:
//                    prepareSendMessagesRequest: ({id, messages}) => ({body: {id, message: messages.at(-1)}});
//     "agui"         @ag-ui/client 1.0.0's HttpAgent (the demo's ConnectingAgent, for reloads);
//     "agui0059"     the same on @ag-ui/client 0.0.59 (the one CopilotKit 1.74 bundles).
//   steps: [{op, ...}], each awaited:
//     {op: "send", text}             a new user message. Over a pending interrupt an AG-UI page
//                                    must address it, in this step or a regenerate or an edit:
//                                    it runs with resume [{interruptId, status: "cancelled"}]
//                                    (the client refuses to run otherwise)
//     {op: "regenerate", user?: n}   answer user message n (0-based; default: the last) again.
//                                    ai: regenerate() / regenerate({messageId: the assistant
//                                    message after it}); AG-UI: the page cuts its messages after
//                                    that user message and runs (what CopilotKit's v1 reload did)
//     {op: "edit", user: n, text}    user message n says `text` now, keeping its id; the client
//                                    drops what came after it. ai: sendMessage({text, messageId});
//                                    AG-UI: setMessages(cut, same id, new content) and run
//     {op: "answer", answer}         the pending approval (answer true/false) or question (answer
//                                    a value). ai: addToolApprovalResponse({id, approved, reason});
//                                    AG-UI: resume [{interruptId, status: "resolved", payload}]
//     {op: "elsewhere", text}        AG-UI: another page (a new client, connected to the thread)
//                                    sends `text`; this one misses that exchange
//     {op: "reload"}                 a fresh client on the same thread, as after a page reload.
//                                    ai: GET <api>/<id>/messages -> new chat; AG-UI: a new
//                                    ConnectingAgent + connectAgent() (POST <run url>/connect)
// Prints ONE JSON line: {client, threadId, steps: [{op, error, messages (the client's),
// pending (the client's open approval or question, or null), thread (GET /threads/<id>)}]}.
// A client's error on a step is recorded in its `error`, not thrown.
import { randomUUID } from 'node:crypto';
import { format } from 'node:util';
import { connectingAgentClass } from './connecting_agent.mjs';
import { chatClass } from './node_chat.mjs';

const [base, rawOptions = '{}'] = process.argv.slice(2);
if (!base) throw new Error('usage: conversation.mjs <base-url> [json-options]');
const options = JSON.parse(rawOptions);
const client = options.client ?? 'ai7';
const agentName = options.agent ?? 'shop';
const threadId = options.threadId ?? `thread-${randomUUID()}`;
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
const errText = (e) => String(e?.message ?? e);
const warnings = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => warnings.push(`${level}: ${format(...args)}`);
}

async function keptThread() {
  const response = await fetch(`${base}/threads/${encodeURIComponent(threadId)}`);
  return response.ok ? response.json() : { status: response.status, body: await response.text() };
}

// -- ai 7 ------------------------------------------------------------------------------------

async function aiClient(newestOnly) {
  const ai = await import('ai');
  const api = `${base}/agents/${agentName}/ai-sdk`;
  const Chat = chatClass(ai);
  let errors = [];
  const open = (messages) => new Chat({
    id: threadId,
    messages,
    transport: new ai.DefaultChatTransport({
      api,
      ...(newestOnly && { prepareSendMessagesRequest: ({ id, messages: all }) => ({ body: { id, message: all.at(-1) } }) }),
    }),
    sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithApprovalResponses,
    onError: (e) => errors.push(errText(e)),
  });
  let chat = open([]);
  // Waits for what sendAutomaticallyWhen started (an answered approval goes on by itself).
  const settled = async () => {
    for (let i = 0; i < 500 && (chat.status === 'submitted' || chat.status === 'streaming'); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const openPart = () => (chat.messages.at(-1)?.parts ?? []).find((p) => p.state === 'approval-requested');
  const users = () => chat.messages.filter((m) => m.role === 'user');
  const ops = {
    send: ({ text }) => chat.sendMessage({ text }),
    regenerate: ({ user }) => {
      if (user === undefined) return chat.regenerate();
      const at = chat.messages.indexOf(users()[user]);
      return chat.regenerate({ messageId: chat.messages[at + 1].id });
    },
    edit: ({ user, text }) => chat.sendMessage({ text, messageId: users()[user].id }),
    answer: async ({ answer }) => {
      const part = openPart();
      if (!part) throw new Error('no approval or question is open');
      const approved = typeof answer === 'boolean' ? answer : true;
      await chat.addToolApprovalResponse({ id: part.approval.id, approved, ...(typeof answer === 'boolean' ? {} : { reason: String(answer) }) });
      await new Promise((r) => setTimeout(r, 50));
      await settled();
    },
    reload: async () => {
      const response = await fetch(`${api}/${encodeURIComponent(threadId)}/messages`);
      if (!response.ok) throw new Error(`GET messages: ${response.status} ${await response.text()}`);
      chat = open(await response.json());
    },
  };
  return {
    run: async (step) => {
      errors = [];
      await ops[step.op](step);
      if (errors.length) throw new Error(errors.join('; '));
    },
    messages: () => copy(chat.messages),
    pending: () => {
      const part = openPart();
      return part ? { tool: part.type.replace(/^tool-/, ''), id: part.approval?.id ?? null } : null;
    },
  };
}

// -- @ag-ui/client ---------------------------------------------------------------------------

async function aguiClient(pkg) {
  const ConnectingAgent = await connectingAgentClass(pkg);
  const url = `${base}/agents/${agentName}/ag-ui`;
  const open = () => new ConnectingAgent({ url, threadId, initialState: {} });
  let agent = open();
  // A page that goes on over an open interrupt (a message typed instead of an answer, a
  // regenerate, an edit) sends it cancelled: the client refuses to run otherwise.
  const run = async (params = {}) => {
    const open = agent.pendingInterrupts ?? [];
    if (open.length && !params.resume) params = { ...params, resume: open.map((i) => ({ interruptId: i.id, status: 'cancelled' })) };
    let failed = null;
    await agent.runAgent(params, { onRunErrorEvent: ({ event }) => { failed = event.message; } });
    if (failed) throw new Error(`RUN_ERROR: ${failed}`);
  };
  const userAt = (n) => agent.messages.map((m, i) => [m, i]).filter(([m]) => m.role === 'user')[n];
  const ops = {
    send: ({ text }) => {
      agent.addMessage({ id: randomUUID(), role: 'user', content: text });
      return run();
    },
    regenerate: ({ user }) => {
      const users = agent.messages.filter((m) => m.role === 'user');
      const [, at] = userAt(user ?? users.length - 1);
      agent.setMessages(agent.messages.slice(0, at + 1));
      return run();
    },
    edit: ({ user, text }) => {
      const [message, at] = userAt(user);
      agent.setMessages([...agent.messages.slice(0, at), { ...message, content: text }]);
      return run();
    },
    answer: ({ answer }) => {
      const [open] = agent.pendingInterrupts ?? [];
      if (!open) throw new Error('no interrupt is open');
      const payload = typeof answer === 'boolean' ? { approved: answer } : answer;
      return run({ resume: [{ interruptId: open.id, status: 'resolved', payload }] });
    },
    reload: async () => {
      agent = open();
      await agent.connectAgent();
    },
    elsewhere: async ({ text }) => {
      const other = open();
      await other.connectAgent();
      other.addMessage({ id: randomUUID(), role: 'user', content: text });
      let failed = null;
      await other.runAgent({}, { onRunErrorEvent: ({ event }) => { failed = event.message; } });
      if (failed) throw new Error(`RUN_ERROR elsewhere: ${failed}`);
    },
  };
  return {
    run: (step) => ops[step.op](step),
    messages: () => copy(agent.messages),
    pending: () => {
      const [open] = agent.pendingInterrupts ?? [];
      return open ? { tool: open.metadata?.tool ?? null, id: open.id, reason: open.reason ?? null } : null;
    },
  };
}

const clients = {
  ai7: () => aiClient(false),
  'ai7-newest': () => aiClient(true),
  agui: () => aguiClient('@ag-ui/client'),
  agui0059: () => aguiClient('agui0059'),
};
if (!clients[client]) throw new Error(`unknown client ${client}; use one of ${Object.keys(clients)}`);
const driver = await clients[client]();
const steps = [];
for (const step of options.steps ?? []) {
  let error = null;
  try {
    await driver.run(step);
  } catch (e) {
    error = errText(e);
  }
  steps.push({ ...step, error, messages: driver.messages(), pending: driver.pending(), thread: await keptThread() });
}
process.stdout.write(`${JSON.stringify({ client, threadId, steps, warnings })}\n`);
