// agui_run.mjs - drive an AG-UI endpoint with the real @ag-ui/client HttpAgent.
//
// Usage: node agui_run.mjs <url> '<json-options>'
//   options (all optional):
//     client: the npm package of the client, '@ag-ui/client' (1.0, the default) or 'agui0059'
//       (0.0.59, the one CopilotKit 1.74 bundles: it sends no protocolVersion)
//     threadId, initialState, initialMessages, headers   -> new HttpAgent({...})
//     message, tools, context, forwardedProps, resume     -> a single run (shorthand)
//     runs: [{message?, tools?, context?, forwardedProps?, resume?, toolResults?}, ...]
//       runs one after another on the SAME agent (same thread, state and messages carried over):
//       - message: a string (added as a user message) or a full AG-UI message object;
//       - toolResults: [{toolCallId?, content, error?, id?}] added as ToolMessages before the run;
//         a missing toolCallId takes the previous run's pendingToolCallIds in order (a 0.0.x
//         client has none: then the calls without a result in agent.messages, as CopilotKit does);
//       - resume: a ResumeEntry[] sent as is, or ONE template {status, payload?, metadata?}
//         applied to every agent.pendingInterrupts (answers the previous run's interrupt).
// Prints ONE JSON line: the last run's fields at top level plus `runs` (one record per run):
//   {resolved, error, events, warnings, state, messages, pendingInterrupts, outcome, request, response}
// A run that rejects is a result (resolved:false), not a script failure; exit code 1 = harness bug.
import { format } from 'node:util';
import { randomUUID } from 'node:crypto';

const [url, rawOptions = '{}'] = process.argv.slice(2);
if (!url) throw new Error('usage: agui_run.mjs <url> [json-options]');
const options = JSON.parse(rawOptions);
const { HttpAgent } = await import(options.client ?? '@ag-ui/client');
const runs = options.runs ?? [options];
const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));

// The client reports recoverable problems (dropped events, failed patches, stripped fields)
// only through console.warn/console.error; capture them per run so a test can assert "no warnings".
let warnings = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => warnings.push(`${level}: ${format(...args)}`);
}

// Record the exact request body (RunAgentInput) the client sends and the response head.
let request = null;
let response = null;
const recordingFetch = async (input, init) => {
  request = init?.body ? JSON.parse(init.body) : null;
  const res = await fetch(input, init);
  response = { status: res.status, contentType: res.headers.get('content-type') };
  return res;
};

const agent = new HttpAgent({
  url,
  threadId: options.threadId,
  initialState: options.initialState,
  initialMessages: options.initialMessages,
  headers: options.headers,
  fetch: recordingFetch,
});

// The tool calls of the messages that have no tool message yet, in order.
const unanswered = (messages) => {
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
  return messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)).filter((id) => !answered.has(id));
};

const records = [];
let previousOutcome = null;
for (const run of runs) {
  warnings = [];
  request = response = null;
  const events = [];
  let outcome = null;

  // A frontend tool's result goes back as a ToolMessage before the next run.
  const pendingIds = [...(previousOutcome?.pendingToolCallIds ?? unanswered(agent.messages))];
  for (const r of run.toolResults ?? []) {
    agent.addMessage({
      id: r.id ?? randomUUID(),
      role: 'tool',
      toolCallId: r.toolCallId ?? pendingIds.shift(),
      content: typeof r.content === 'string' ? r.content : JSON.stringify(r.content),
      ...(r.error !== undefined && { error: r.error }),
    });
  }
  if (run.message !== undefined) {
    agent.addMessage(
      typeof run.message === 'string'
        ? { id: randomUUID(), role: 'user', content: run.message }
        : run.message,
    );
  }
  // Answer the previous run's interrupts: either explicit entries or one template for all.
  let resume = run.resume;
  if (resume && !Array.isArray(resume)) {
    resume = agent.pendingInterrupts.map((i) => ({ interruptId: i.id, ...run.resume }));
  }

  const subscriber = {
    // Every event the client accepted (after its enforce/transform/verify stages), in order.
    onEvent: ({ event }) => {
      events.push(copy(event));
    },
    // The client's own reading of RUN_FINISHED: success / interrupt / cancelled.
    onRunFinishedEvent: (params) => {
      outcome = copy({
        type: params.outcome,
        interrupts: params.interrupts,
        pendingToolCallIds: params.pendingToolCallIds,
        result: params.result,
      });
    },
  };
  let resolved = true;
  let error = null;
  try {
    await agent.runAgent(
      {
        tools: run.tools,
        context: run.context,
        forwardedProps: run.forwardedProps,
        ...(resume !== undefined && { resume }),
      },
      subscriber,
    );
  } catch (e) {
    resolved = false;
    error = String(e?.message ?? e);
  }
  previousOutcome = outcome;
  records.push({
    resolved,
    error,
    events,
    warnings,
    state: copy(agent.state),
    messages: copy(agent.messages),
    pendingInterrupts: copy(agent.pendingInterrupts ?? null),
    outcome,
    request,
    response,
  });
}

process.stdout.write(`${JSON.stringify({ ...records.at(-1), runs: records })}\n`);
