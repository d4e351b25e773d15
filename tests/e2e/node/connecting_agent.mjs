// The demo's ConnectingAgent (frontend-demo/src/shared/ConnectingAgent.ts) on a real
// @ag-ui/client: the file is compiled with frontend-demo's TypeScript, its CopilotKit import
// replaced by the client under test ('@ag-ui/client' 1.0, or 'agui0059' 0.0.59), which has the
// same three names (HttpAgent, runHttpRequest, transformHttpEventStream).
//
//   const ConnectingAgent = await connectingAgentClass('@ag-ui/client');
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..');

/** The ConnectingAgent class, built on `client`'s HttpAgent. */
export async function connectingAgentClass(client) {
  const source = join(repo, 'frontend-demo', 'src', 'shared', 'ConnectingAgent.ts');
  const ts = createRequire(join(repo, 'frontend-demo', 'package.json'))('typescript');
  const compiled = ts.transpileModule(readFileSync(source, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText.replaceAll('"@copilotkit/react-core/v2"', JSON.stringify(client));
  const module = join(here, `.ConnectingAgent-${process.pid}-${client.replace(/\W/g, '')}.mjs`);
  writeFileSync(module, compiled);
  try {
    return (await import(pathToFileURL(module).href)).ConnectingAgent;
  } finally {
    rmSync(module, { force: true });
  }
}
