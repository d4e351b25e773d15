// Drives one view of the built demo page in Debian's Chromium (playwright-core) through a
// conversation that goes back and types over approvals, as a person would:
//
//   node tests/e2e/browser/demo_conversation.mjs <base-url> <view> <scenario> <artifacts-dir>
//
// Scenarios:
//   typed-over  (every view) a message typed while the checkout approval waits, a reload, more
//               use; then an approval left waiting over a reload, shown again and approved
//   branches    (copilotkit) regenerate an answer, edit a message (the page's own handlers in
//               CopilotChat's slots: CopilotKit v2 has none), type over an approval, reload
//               while one waits and deny it
// Prints ONE JSON line: {ok, view, scenario, steps: [{name, page, thread}], error,
// consoleErrors, offsite, screenshots}: after each step, the messages the page shows
// (`page`: [{role, text}]) and the thread the server keeps (`thread`: GET /threads/{id}'s
// messages). Exit 0 even when a step fails (the test asserts on `ok`); 1 when the script broke.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { failure, openPage } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "..", "..", "frontend-demo", "package.json"));
const { chromium } = require("playwright-core");

const [base, view, scenario, artifacts] = process.argv.slice(2);
const STEP_MS = Number(process.env.STEP_MS || 15000);
mkdirSync(artifacts, { recursive: true });
const result = { ok: false, view, scenario, steps: [], error: null, consoleErrors: [], offsite: [], screenshots: [] };
const copilot = view === "copilotkit";
const USER = copilot ? "[data-testid=copilot-user-message]" : "[data-testid=msg-user]";
const ASSISTANT = copilot ? "[data-testid=copilot-assistant-message]" : "[data-testid=msg-assistant]";

const chat = (page) => page.getByTestId("chat");
const item = (page, list, text) => page.getByTestId(list).locator(".row", { hasText: text });
const approval = (page) => page.getByTestId("approval");

async function say(page, text) {
  const input = copilot ? chat(page).getByTestId("copilot-chat-textarea") : chat(page).getByLabel("Message");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
  await chat(page).locator(USER, { hasText: text }).last().waitFor({ timeout: STEP_MS });
}

// No run going on: our stop button gone, or CopilotKit's agent idle.
async function idle(page) {
  await page.waitForTimeout(300);
  if (copilot) {
    await page.waitForFunction(() => !document.querySelector("[data-testid=chat] [data-copilot-running=true]"), null, { timeout: STEP_MS });
    await page.locator(".board:not(.busy)").waitFor({ timeout: STEP_MS });
  } else {
    await page.getByTestId("stop").waitFor({ state: "detached", timeout: STEP_MS });
  }
}

async function loaded(page) {
  await page.getByTestId("todos").waitFor({ timeout: STEP_MS });
  await chat(page).waitFor({ timeout: STEP_MS });
  if (copilot) await chat(page).getByTestId("copilot-chat-textarea").waitFor({ timeout: STEP_MS });
  await idle(page);
}

// What the page shows and what the server keeps, recorded as the step `name`.
async function step(page, name) {
  const shown = await page.$$eval(`${USER}, ${ASSISTANT}`, (els, user) =>
    els.map((e) => ({ role: e.matches(user) ? "user" : "assistant", text: e.innerText.trim() })), USER);
  const thread = await page.evaluate(async (v) => {
    const id = localStorage.getItem(`pyox-demo:${v}:current`);
    const response = await fetch(`threads/${encodeURIComponent(id)}`);
    return response.ok ? (await response.json()).messages : { status: response.status };
  }, view);
  result.steps.push({ name, page: shown, thread });
}

async function shot(page, name) {
  const path = join(artifacts, `${view}-${scenario}-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  result.screenshots.push(path);
}

async function reload(page) {
  await page.reload();
  await loaded(page);
}

// The checkout's tool call in the chat, shown `status` (denied, done, waiting).
async function checkoutShows(page, status, index = -1) {
  await page.waitForFunction(([s, i]) => {
    const calls = [...document.querySelectorAll("[data-testid=chat] [data-testid=tool-call]")]
      .filter((c) => c.querySelector(".tool-name")?.textContent === "tool checkout");
    const call = calls.at(i);
    return call?.classList.contains(s);
  }, [status, index], { timeout: STEP_MS });
}

const scenarios = {
  async "typed-over"(page) {
    await say(page, "add milk to my cart");
    await item(page, "cart", "milk").waitFor({ timeout: STEP_MS });
    await idle(page);
    await say(page, "check out");
    await approval(page).waitFor({ timeout: STEP_MS });
    await step(page, "approval asked");
    await say(page, "add bread to my cart"); // typed while it waits
    await approval(page).waitFor({ state: "detached", timeout: STEP_MS });
    await item(page, "cart", "bread").waitFor({ timeout: STEP_MS });
    await idle(page);
    await checkoutShows(page, "denied");
    if ((await page.getByTestId("order").count()) !== 0) throw new Error("a declined checkout placed an order");
    await step(page, "typed over the approval: declined, the message answered");
    await shot(page, "1-typed-over");
    await reload(page);
    await chat(page).locator(USER, { hasText: "add bread to my cart" }).waitFor({ timeout: STEP_MS });
    await checkoutShows(page, "denied");
    if (await approval(page).count()) throw new Error("the declined approval is asked again after a reload");
    await step(page, "reloaded");
    await say(page, "add eggs to my cart");
    await item(page, "cart", "eggs").waitFor({ timeout: STEP_MS });
    await idle(page);
    await step(page, "a message after the reload is answered");
    await say(page, "check out");
    await approval(page).waitFor({ timeout: STEP_MS });
    await reload(page);
    await approval(page).waitFor({ timeout: STEP_MS });
    await checkoutShows(page, "waiting");
    await step(page, "reloaded while the approval waits: asked again");
    await shot(page, "2-reloaded-approval");
    await approval(page).getByRole("button", { name: "Approve" }).click();
    await page.getByTestId("orders").locator(".row", { hasText: "confirmed" }).waitFor({ timeout: STEP_MS });
    await page.getByTestId("cart").locator(".empty").waitFor({ timeout: STEP_MS });
    await idle(page);
    await checkoutShows(page, "done");
    await step(page, "approved after the reload: order confirmed");
    await say(page, "add apples to my cart");
    await item(page, "cart", "apples").waitFor({ timeout: STEP_MS });
    await idle(page);
    await step(page, "and on");
  },

  async branches(page) {
    await say(page, "add milk to my cart");
    await idle(page);
    await say(page, "add eggs to my cart");
    await idle(page);
    await step(page, "two exchanges");
    const before = await chat(page).locator(ASSISTANT).last().getAttribute("data-message-id");
    await chat(page).locator(ASSISTANT).last().hover();
    await chat(page).getByTestId("copilot-regenerate-button").last().click();
    await page.waitForFunction(([sel, id]) => [...document.querySelectorAll(sel)].at(-1)?.getAttribute("data-message-id") !== id,
      [`[data-testid=chat] ${ASSISTANT}`, before], { timeout: STEP_MS });
    await idle(page);
    await step(page, "the last answer regenerated");
    await chat(page).locator(USER).first().hover();
    await chat(page).getByTestId("copilot-edit-button").first().click();
    await page.getByLabel("Edited message").fill("add bread to my cart");
    await page.getByTestId("edit-message").getByRole("button", { name: "Send" }).click();
    await chat(page).locator(USER, { hasText: "add milk to my cart" }).waitFor({ state: "detached", timeout: STEP_MS });
    await chat(page).locator(USER, { hasText: "add bread to my cart" }).waitFor({ timeout: STEP_MS });
    await idle(page);
    await step(page, "the first message edited: what followed it is gone");
    await say(page, "check out");
    await approval(page).waitFor({ timeout: STEP_MS });
    await say(page, "add apples to my cart");
    await approval(page).waitFor({ state: "detached", timeout: STEP_MS });
    await item(page, "cart", "apples").waitFor({ timeout: STEP_MS });
    await idle(page);
    await step(page, "typed over the approval");
    await say(page, "check out");
    await approval(page).waitFor({ timeout: STEP_MS });
    await reload(page);
    await approval(page).waitFor({ timeout: STEP_MS });
    await step(page, "reloaded while the approval waits");
    await approval(page).getByRole("button", { name: "Deny" }).click();
    await chat(page).getByText(/not placed/).first().waitFor({ timeout: STEP_MS });
    await idle(page);
    if ((await page.getByTestId("order").count()) !== 0) throw new Error("a denied checkout placed an order");
    await step(page, "denied after the reload");
    await shot(page, "done");
  },
};

await openPage(chromium, { base, result, profilePrefix: "pyox-demo-conversation-" }, async (page) => {
  try {
    await page.goto(`${base}/#${view}`);
    await loaded(page);
    await scenarios[scenario](page);
    result.ok = true;
  } catch (e) {
    result.error = failure(e);
    try {
      await shot(page, "failed");
    } catch {}
  }
});
