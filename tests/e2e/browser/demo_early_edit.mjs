// A person who types before the thread has come back: the demo page's AG-UI or CopilotKit view
// on a new thread, whose connect (the thread's state and messages) the test's server answers
// late.
//
//   node tests/e2e/browser/demo_early_edit.mjs <base-url> <view: ag-ui|copilotkit> <artifacts-dir>
//
// The todo added before the connect's state arrives is on the board when it has arrived, and
// the agent's first run (asked to add milk) starts from it: the server's state holds both.
// Prints ONE JSON line: {ok, steps, error, threadId, shownAfterConnect, server, consoleErrors,
// offsite, screenshots}.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { failure, openPage } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "..", "..", "frontend-demo", "package.json"));
const { chromium } = require("playwright-core");

const [base, view, artifacts] = process.argv.slice(2);
const STEP_MS = Number(process.env.STEP_MS || 15000);
mkdirSync(artifacts, { recursive: true });
const result = { ok: false, steps: [], error: null, threadId: null, shownAfterConnect: null, server: null,
                 consoleErrors: [], offsite: [], screenshots: [] };
const item = (page, list, text) => page.getByTestId(list).locator(".row", { hasText: text });

await openPage(chromium, { base, result, profilePrefix: "pyox-early-edit-" }, async (page) => {
  try {
    const connected = page.waitForResponse((r) => r.url().endsWith("/ag-ui/connect"), { timeout: STEP_MS });
    connected.catch(() => undefined); // (awaited below; a failure before it is told there)
    await page.goto(`${base}/#${view}`);
    await page.getByLabel("New todo").fill("typed early");
    await page.getByLabel("New todo").press("Enter");
    await item(page, "todos", "typed early").waitFor({ timeout: STEP_MS });
    result.steps.push("a todo added before the thread came back");
    await (await connected).finished();
    await page.waitForTimeout(500); // the connect's state shown
    result.shownAfterConnect = await item(page, "todos", "typed early").count();
    result.steps.push("the connect answered");
    const chat = page.getByTestId("chat");
    const input = view === "copilotkit" ? chat.locator("textarea, input[type=text]").first() : chat.getByLabel("Message");
    await input.fill("add milk to my cart");
    await input.press("Enter");
    await item(page, "cart", "milk").waitFor({ timeout: STEP_MS });
    await page.locator("[data-testid=live-status][data-running=false]").waitFor({ timeout: STEP_MS });
    const href = await page.getByTestId("second-window").getAttribute("href");
    result.threadId = decodeURIComponent(href.split("/")[1]);
    const response = await fetch(`${base}/threads/${encodeURIComponent(result.threadId)}`);
    result.server = (await response.json()).state;
    result.steps.push("the agent added milk");
    result.ok = true;
  } catch (e) {
    result.error = failure(e);
    try {
      const path = join(artifacts, `early-edit-${view}-failed.png`);
      await page.screenshot({ path, fullPage: true });
      result.screenshots.push(path);
    } catch {}
  }
});
