// agui_schemas.mjs - parse AG-UI events with a client's own zod schemas (`EventSchemas`).
//
// Usage: node agui_schemas.mjs <module> <file>   <file> holds a JSON array of streams (each an
//   array of events, as the JSON the server sent). <module> is '@ag-ui/core/schemas' (1.0) or
//   'agui0059-core' (@ag-ui/core 0.0.59, the one @ag-ui/client 0.0.59 parses events with).
// Prints ONE JSON line: {checked, failures: [{stream, index, type, issues}]}.
import { readFileSync } from 'node:fs';

const [module, file] = process.argv.slice(2);
if (!module || !file) throw new Error('usage: agui_schemas.mjs <module> <streams.json>');
const { EventSchemas } = await import(module);
const streams = JSON.parse(readFileSync(file, 'utf8'));
let checked = 0;
const failures = [];
streams.forEach((events, stream) => {
  events.forEach((event, index) => {
    checked += 1;
    const parsed = EventSchemas.safeParse(event);
    if (!parsed.success) {
      failures.push({ stream, index, type: event.type, issues: parsed.error.issues });
    }
  });
});
process.stdout.write(`${JSON.stringify({ checked, failures })}\n`);
