// A project written by `pyox-agents new`, built and served, in Debian's Chromium
// (playwright-core): its page on one origin (vite preview), its agent on another (CORS).
//
//   node tests/e2e/browser/starter.mjs <page-url> <api-url> <copilotkit|ai-sdk> <artifacts-dir>
//
// The network is slow where it races the person: the answer of each connect (CopilotKit's,
// when the page opens) reaches the page a second late. The person adds a todo by hand on a new
// thread as the page opens, then asks the agent to add two (each tool call shows in the chat);
// ticks one and adds one by hand, then asks the agent to tick another: the hand edits survive
// the run, on the page and on the server. A reload brings the thread back (its messages, a tool
// call, the list) with a todo added by hand as it came; "clear the list" asks for an approval,
// and Approve clears it. Then the page at a phone's width. Prints ONE JSON line: {ok, steps,
// error, threadId, consoleErrors, offsite, screenshots, kept: {afterRun, afterReload,
// afterClear}, phoneWidth, accessibility: {afterRuns, approval: axe-core's serious and
// critical findings}}.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { accessibility, failure, openPage } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "..", "..", "frontend-demo", "package.json"));
const { chromium } = require("playwright-core");

const [pageUrl, api, ui, artifacts] = process.argv.slice(2);
const STEP_MS = Number(process.env.STEP_MS || 20000);
mkdirSync(artifacts, { recursive: true });
const result = { ok: false, steps: [], error: null, threadId: null, consoleErrors: [], offsite: [], screenshots: [], kept: {}, accessibility: {} };

const todo = (page, text) => page.getByTestId("todos").locator("li", { hasText: text });
const chat = (page) => page.getByTestId("chat");

async function say(page, text) {
  const input = ui === "copilotkit" ? chat(page).getByTestId("copilot-chat-textarea") : chat(page).getByLabel("Message");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

async function addByHand(page, text) {
  await page.getByLabel("New todo").fill(text);
  await page.getByLabel("New todo").press("Enter");
  await todo(page, text).waitFor({ timeout: STEP_MS });
}

/** Until the run has ended (the page says no run goes on). */
async function idle(page) {
  await page.waitForFunction(() => !document.querySelector('[data-testid="status"]')?.textContent?.includes("working"), null, { timeout: STEP_MS });
}

async function checked(page, text) {
  return page.getByLabel(`done: ${text}`).isChecked();
}

async function kept(threadId) {
  const response = await fetch(`${api}/threads/${encodeURIComponent(threadId)}`);
  if (!response.ok) throw new Error(`GET /threads/${threadId} answered ${response.status}`);
  return (await response.json()).state;
}

/** Until the thread the server keeps has a todo `text`. */
async function keptWith(threadId, text) {
  for (let waited = 0; waited < STEP_MS; waited += 100) {
    const state = await kept(threadId);
    if (state.todos?.some((t) => t.text === text)) return state;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server's thread has no todo "${text}"`);
}

async function step(name, body) {
  await body();
  result.steps.push(name);
}

async function shot(page, name) {
  const path = join(artifacts, `starter-${ui}-${name}.png`);
  await page.screenshot({ path });
  result.screenshots.push(path);
}

await openPage(chromium, { base: pageUrl, also: [api], result, profilePrefix: "pyox-starter-" }, async (page) => {
  try {
    await step("opened a new thread", async () => {
      await page.route("**/connect", async (route) => {
        const response = await route.fetch();
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await route.fulfill({ response });
      });
      await page.goto(pageUrl);
      await page.getByLabel("New todo").waitFor({ timeout: STEP_MS });
      result.threadId = new URL(page.url()).searchParams.get("thread");
      if (!result.threadId) throw new Error(`no thread in the address: ${page.url()}`);
    });
    await step("a hand edit before the first run", () => addByHand(page, "Call mom"));
    await step("the agent added two todos, its tool calls shown", async () => {
      await say(page, "add milk and eggs");
      await todo(page, "milk").waitFor({ timeout: STEP_MS });
      await todo(page, "eggs").waitFor({ timeout: STEP_MS });
      await chat(page).getByText("add_todo").first().waitFor({ timeout: STEP_MS });
      await todo(page, "Call mom").waitFor({ timeout: STEP_MS });
      await idle(page);
    });
    await step("hand edits after the run", async () => {
      await page.getByLabel("done: milk").check({ timeout: STEP_MS });
      await addByHand(page, "Buy bread");
    });
    await step("the hand edits survived the next run", async () => {
      await say(page, "done with eggs");
      await page.waitForFunction(() => document.querySelector('input[aria-label="done: eggs"]')?.checked, null, { timeout: STEP_MS });
      await idle(page);
      if (!(await checked(page, "milk"))) throw new Error("the hand-ticked milk was unticked by the run");
      await todo(page, "Buy bread").waitFor({ timeout: STEP_MS });
      result.kept.afterRun = await kept(result.threadId);
      await shot(page, "desktop");
      result.accessibility.afterRuns = await accessibility(page, require);
    });
    await step("a reload brings the thread back, with a hand edit made as it came", async () => {
      await page.reload();
      await addByHand(page, "Call dad");
      await todo(page, "Buy bread").waitFor({ timeout: STEP_MS });
      await todo(page, "Call dad").waitFor({ timeout: STEP_MS });
      await chat(page).getByText("add milk and eggs").first().waitFor({ timeout: STEP_MS });
      await chat(page).getByText("add_todo").first().waitFor({ timeout: STEP_MS });
      if (!(await checked(page, "milk")) || !(await checked(page, "eggs"))) throw new Error("the ticks are not back after the reload");
      result.kept.afterReload = await keptWith(result.threadId, "Call dad");
    });
    await step("an approval asked, approved, the list cleared", async () => {
      await say(page, "clear the list");
      const dialog = page.getByRole("dialog", { name: "Approval" });
      await dialog.waitFor({ timeout: STEP_MS });
      result.accessibility.approval = await accessibility(page, require);
      await dialog.getByRole("button", { name: "Approve" }).click({ timeout: STEP_MS });
      await page.getByTestId("todos").getByText("Nothing yet.").waitFor({ timeout: STEP_MS });
      await idle(page);
      result.kept.afterClear = await kept(result.threadId);
    });
    await step("at a phone's width", async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await addByHand(page, "Water the plants");
      result.phoneWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      await shot(page, "phone");
    });
    result.ok = true;
  } catch (e) {
    result.error = failure(e);
    await shot(page, "failed").catch(() => undefined);
  }
});
