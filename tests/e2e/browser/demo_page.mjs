// Drives the built demo page in Debian's Chromium with playwright-core, like a person would.
//
//   node tests/e2e/browser/demo_page.mjs <base-url> <view: ag-ui|ai-sdk|copilotkit> <artifacts-dir>
//
// Runs the scenario of issue 8 on one view and prints ONE JSON line:
// {ok, view, steps: [names done], error, consoleErrors, offsite: [requests to other hosts],
//  screenshots: [paths]}. Exit 0 even when a step fails (the Python test asserts on `ok`);
// exit 1 only when the script itself broke.
import { createRequire } from "node:module";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { failure, openPage } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const require = createRequire(join(repo, "frontend-demo", "package.json"));
const { chromium } = require("playwright-core");

const [base, view, artifacts] = process.argv.slice(2);
const STEP_MS = Number(process.env.STEP_MS || 15000);
mkdirSync(artifacts, { recursive: true });
for (const name of readdirSync(artifacts)) {
  if (name.startsWith(`${view}-`) && name.endsWith(".png")) rmSync(join(artifacts, name)); // an earlier run's
}

const result = { ok: false, view, steps: [], error: null, consoleErrors: [], offsite: [], screenshots: [] };

function step(name) {
  result.steps.push(name);
}

async function shot(page, name) {
  const path = join(artifacts, `${view}-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  result.screenshots.push(path);
}

// The chat input and send, for our own panel and for CopilotKit's prebuilt chat.
async function say(page, text) {
  const chat = page.getByTestId("chat");
  const input = view === "copilotkit" ? chat.locator("textarea, input[type=text]").first() : chat.getByLabel("Message");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

// Waits until no run is going on: the stop button is gone (ours) or the agent is idle.
async function idle(page) {
  if (view === "copilotkit") {
    await page.waitForTimeout(300);
    await page.waitForFunction(() => !document.querySelector("[data-testid=chat] [data-copilot-running=true]"), null, { timeout: STEP_MS });
    return;
  }
  await page.getByTestId("stop").waitFor({ state: "detached", timeout: STEP_MS });
}

const item = (page, list, text) => page.getByTestId(list).locator(".row", { hasText: text });

async function scenario(page) {
  await page.goto(`${base}/#${view}`);
  await page.getByTestId("todos").waitFor({ timeout: STEP_MS });
  await page.getByTestId("chat").waitFor({ timeout: STEP_MS });
  step("page loaded");

  // 1. The agent adds two items; both appear, highlighted.
  await say(page, "add milk and eggs to my cart");
  for (const name of ["milk", "eggs"]) {
    await page.getByTestId("cart").locator(".row.hot", { hasText: name }).waitFor({ timeout: STEP_MS });
  }
  await idle(page);
  step("milk and eggs added, highlighted");
  await shot(page, "1-added");

  // 2. The person adds two todos and ticks one; the agent clears completed todos.
  for (const text of ["walk the dog", "water the plants"]) {
    await page.getByLabel("New todo").fill(text);
    await page.getByLabel("New todo").press("Enter");
    await item(page, "todos", text).waitFor({ timeout: STEP_MS });
  }
  await page.getByLabel("done: walk the dog").check();
  step("todo ticked by hand");
  await say(page, "clear completed");
  await item(page, "todos", "walk the dog").waitFor({ state: "detached", timeout: STEP_MS });
  await item(page, "todos", "water the plants").waitFor({ timeout: STEP_MS });
  await idle(page);
  step("completed todo cleared by the agent");

  // 3. Check out, approve: the order is confirmed and the cart empties.
  await say(page, "check out");
  await page.getByTestId("approval").waitFor({ timeout: STEP_MS });
  await shot(page, "2-approval");
  await page.getByTestId("approval").getByRole("button", { name: "Approve" }).click();
  await page.getByTestId("orders").locator(".row", { hasText: "confirmed" }).waitFor({ timeout: STEP_MS });
  await page.getByTestId("cart").locator(".empty").waitFor({ timeout: STEP_MS });
  await idle(page);
  step("checkout approved, order confirmed");

  // 4. Another checkout, denied: refused, the cart stays.
  await say(page, "add bread to my cart");
  await item(page, "cart", "bread").waitFor({ timeout: STEP_MS });
  await idle(page);
  await say(page, "check out");
  await page.getByTestId("approval").waitFor({ timeout: STEP_MS });
  await page.getByTestId("approval").getByRole("button", { name: "Deny" }).click();
  await page.getByTestId("chat").getByText(/not placed|denied|refused/i).first().waitFor({ timeout: STEP_MS });
  await idle(page);
  if ((await page.getByTestId("order").count()) !== 1) throw new Error("a denied checkout placed an order");
  await item(page, "cart", "bread").waitFor({ timeout: STEP_MS });
  step("checkout denied, refused");

  if (view === "ai-sdk") await aiSdkParts(page);

  // 5. Reload: the thread and its state come back.
  await page.reload();
  await item(page, "cart", "bread").waitFor({ timeout: STEP_MS });
  await item(page, "todos", "water the plants").waitFor({ timeout: STEP_MS });
  await page.getByTestId("order").first().waitFor({ timeout: STEP_MS });
  await page.getByTestId("chat").getByText("add milk and eggs to my cart").first().waitFor({ timeout: STEP_MS });
  await page.getByTestId("threads").getByText("add milk and eggs to my cart").waitFor({ timeout: STEP_MS });
  step("reloaded: thread and state back");
  await page.getByTestId("state-panel").locator("summary").click();
  await shot(page, "3-reloaded");
}

// AI SDK view only: a tool's live progress, a reload while it runs (history from /messages, the
// stream resumed into the same message), then its source link and the message's metadata.
async function aiSdkParts(page) {
  const ask = "find a recipe for pancakes";
  await say(page, ask);
  const progress = page.getByTestId("chat").getByTestId("progress");
  await progress.filter({ hasText: /Looking in/ }).first().waitFor({ timeout: STEP_MS });
  step("live progress shown");
  await shot(page, "4-progress");
  const resumed = page.waitForResponse((r) => r.url().endsWith("/stream") && r.request().method() === "GET", { timeout: STEP_MS });
  await page.reload();
  if ((await resumed).status() !== 200) throw new Error("the reloaded page found no running stream to resume");
  await page.getByTestId("chat").getByText(ask).first().waitFor({ timeout: STEP_MS });
  const answer = page.getByTestId("msg-assistant").filter({ hasText: "Here is a recipe for pancakes" });
  await answer.waitFor({ timeout: STEP_MS });
  await idle(page);
  if ((await answer.count()) !== 1) throw new Error(`the resumed run shows ${await answer.count()} answers, not one message`);
  if ((await page.getByTestId("chat").getByText(ask).count()) !== 1) throw new Error("the question shows twice after the reload");
  step("reloaded mid-run: resumed into one message");
  const source = answer.getByTestId("source");
  if ((await source.getAttribute("href")) !== "https://en.wikipedia.org/wiki/Pancakes") throw new Error("no source link under the answer");
  await answer.getByTestId("meta").filter({ hasText: /demo · \d+ in \/ \d+ out tokens/ }).waitFor({ timeout: STEP_MS });
  await answer.getByTestId("progress").filter({ hasText: "Looked in 3 places" }).waitFor({ timeout: STEP_MS });
  step("source link and metadata under the answer");
  await shot(page, "5-recipe");
}

await openPage(chromium, { base, result, profilePrefix: "pyox-demo-chromium-" }, async (page) => {
  try {
    await scenario(page);
    result.ok = true;
  } catch (e) {
    result.error = failure(e);
    try {
      await shot(page, "failed");
    } catch {}
  }
});
