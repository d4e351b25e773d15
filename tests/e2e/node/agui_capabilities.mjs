// agui_capabilities.mjs - parse an agent's capabilities with a client's own zod schema.
//
// Usage: node agui_capabilities.mjs <module> <url>   <module>: '@ag-ui/core/schemas' (1.0) or
//   'agui0059-core' (0.0.59); <url>: GET /agents/{name}/ag-ui/capabilities.
// Prints ONE JSON line: {status, body, success, issues}.
const [module, url] = process.argv.slice(2);
if (!module || !url) throw new Error('usage: agui_capabilities.mjs <module> <url>');
const { AgentCapabilitiesSchema } = await import(module);
const response = await fetch(url);
const body = await response.json();
const parsed = AgentCapabilitiesSchema.safeParse(body);
process.stdout.write(`${JSON.stringify({
  status: response.status, body, success: parsed.success, issues: parsed.error?.issues ?? [],
})}\n`);
