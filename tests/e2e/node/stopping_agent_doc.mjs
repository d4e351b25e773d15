// stopping_agent_doc.mjs - the threads guide's StoppingHttpAgent, as written there, with the
// real @ag-ui/client (1.0.0, or the 0.0.59 CopilotKit bundles).
//
// Usage: node stopping_agent_doc.mjs <run-url> '<json-options>'
//   options: threadId, client ("1.0.0" | "0.0.59"), source (the guide's TypeScript block).
// 1. agent A runs; its abortRun() as the tool starts (CopilotKit's stop button);
// 2. the thread is idle again long before the tool would end (the server stopped the run);
// 3. agent B runs on the thread; A's abortRun() again (a stop for A's run, which has ended):
//    B's run goes on; then B's abortRun() stops it.
// Prints ONE JSON line: {stoppedMs, staleLeftRunning, secondStoppedMs, error}
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const typescript = createRequire(join(here, '..', '..', '..', 'frontend-demo', 'package.json'))('typescript');
const [url, rawOptions] = process.argv.slice(2);
const options = JSON.parse(rawOptions);
const base = url.slice(0, url.indexOf('/agents/'));

let source = typescript.transpileModule(options.source, {
  compilerOptions: { module: typescript.ModuleKind.ESNext, target: typescript.ScriptTarget.ES2022 },
}).outputText;
if (options.client === '0.0.59') source = source.replaceAll('"@ag-ui/client"', '"agui0059"');
const file = join(here, `.stopping-agent-${process.pid}.mjs`);
writeFileSync(file, source);
let StoppingHttpAgent;
try {
  ({ StoppingHttpAgent } = await import(pathToFileURL(file).href));
} finally {
  rmSync(file);
}

const running = async () => (await (await fetch(`${base}/threads/${options.threadId}`)).json()).running;
async function until(want, ms) {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if ((await running()) === want) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the thread was not ${want ? 'running' : 'idle'} within ${ms} ms`);
}
function start(agent, text, onToolStart) {
  agent.addMessage({ id: randomUUID(), role: 'user', content: text });
  return agent.runAgent({}, { onToolCallStartEvent: onToolStart }).catch(() => undefined);
}

const result = { stoppedMs: null, staleLeftRunning: null, secondStoppedMs: null, error: null };
try {
  const a = new StoppingHttpAgent({ url, threadId: options.threadId });
  const first = start(a, 'wait', () => a.abortRun());
  result.stoppedMs = await until(false, 10000);
  await first;
  const b = new StoppingHttpAgent({ url, threadId: options.threadId });
  let toolStarted;
  const started = new Promise((r) => (toolStarted = r));
  const second = start(b, 'wait again', () => toolStarted());
  await Promise.race([started, second.then(() => { throw new Error("B's run ended before its tool started"); })]);
  await until(true, 5000);
  a.abortRun(); // A's run ended long ago: the stop names it, and leaves B's going
  await new Promise((r) => setTimeout(r, 500));
  result.staleLeftRunning = await running();
  const asked = Date.now();
  b.abortRun();
  await until(false, 10000);
  result.secondStoppedMs = Date.now() - asked;
  await second;
} catch (e) {
  result.error = String(e?.stack ?? e);
}
console.log(JSON.stringify(result));
