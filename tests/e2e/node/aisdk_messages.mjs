// aisdk_messages.mjs - load a chat's history the way a reloaded useChat page does, and check it
// with the real `ai` client's own validator.
//
// Usage: node aisdk_messages.mjs <messages-url> [major]
//   GETs the url (GET /agents/{name}/ai-sdk/{chat_id}/messages), then runs
//   validateUIMessages({messages}) of the `ai` major (7 = package `ai`, 6 = `ai6`, 5 = `ai5`).
// Prints ONE JSON line: {status, valid, error, messages}
import { createRequire } from 'node:module';

const [url, rawMajor = '7'] = process.argv.slice(2);
if (!url) throw new Error('usage: aisdk_messages.mjs <messages-url> [major]');
const pkg = { 7: 'ai', 6: 'ai6', 5: 'ai5' }[Number(rawMajor)];
const ai = await import(pkg);
const version = createRequire(import.meta.url)(`${pkg}/package.json`).version;
const response = await fetch(url);
const report = { version, status: response.status, valid: false, error: null, messages: null };
if (response.ok) {
  report.messages = await response.json();
  try {
    await ai.validateUIMessages({ messages: report.messages });
    report.valid = true;
  } catch (e) {
    report.error = String(e?.message ?? e);
  }
} else {
  report.error = await response.text();
}
process.stdout.write(`${JSON.stringify(report)}\n`);
