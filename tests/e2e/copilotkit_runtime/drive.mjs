// Drives the page (page/App.tsx, served with the runtime by server.ts) in Debian's Chromium with
// playwright-core, like a person would, for one scenario:
//
//   node drive.mjs <base-url> <chat|frontend-tool|interrupt|reload-while-paused|shared-state> <artifacts-dir>
//
// Prints ONE JSON line: {ok, scenario, steps: [names done], error, consoleErrors, offsite:
// [requests to other hosts], screenshot, threadId}. Exit 0 even when a step fails (the Python test asserts
// on `ok`); exit 1 only when the script itself broke.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { failure, openPage } from "../browser/chromium.mjs";

const [base, scenario, artifacts] = process.argv.slice(2);
const STEP_MS = Number(process.env.STEP_MS || 20000);
mkdirSync(artifacts, { recursive: true });

const result = { ok: false, scenario, steps: [], error: null, consoleErrors: [], offsite: [], screenshot: null, threadId: null };

const chat = (page) => page.getByTestId("chat");
const step = (name) => result.steps.push(name);

// Types in CopilotChat's input and sends; the message is sent when the input is empty again
// and the message list shows it.
async function say(page, text) {
  const input = chat(page).getByTestId("copilot-chat-textarea");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
  await page.waitForFunction((el) => el.value === "", await input.elementHandle(), { timeout: STEP_MS });
  await chat(page).getByTestId("copilot-message-list").getByText(text, { exact: true }).first().waitFor({ timeout: STEP_MS });
}

async function sees(page, text, where = chat(page)) {
  await where.getByText(text).first().waitFor({ timeout: STEP_MS });
}

// Connected to the runtime (useAgent's isReady) and no run going on (agent.isRunning).
async function idle(page) {
  await page.waitForTimeout(200);
  await page.getByTestId("running").getByText("idle").waitFor({ timeout: STEP_MS });
}

const scenarios = {
  async chat(page) {
    await say(page, "hello");
    await sees(page, "Hello from pyox-agents, through the CopilotKit runtime.");
    await idle(page);
    step("text answer shown");
  },

  async "frontend-tool"(page) {
    await say(page, "make the background teal");
    await page.locator("[data-testid=page][data-background=teal]").waitFor({ timeout: STEP_MS });
    step("the page ran change_background");
    await sees(page, "The background is teal now.");
    await idle(page);
    step("the run continued with the tool's result");
  },

  async interrupt(page) {
    await say(page, "check out");
    const approval = page.getByTestId("approval");
    await approval.waitFor({ timeout: STEP_MS });
    await sees(page, "place_order", approval);
    step("approval shown");
    await approval.getByRole("button", { name: "Approve" }).click();
    await approval.waitFor({ state: "detached", timeout: STEP_MS });
    await sees(page, "order 1", page.getByTestId("orders"));
    await sees(page, "Your order is placed.");
    await idle(page);
    step("approved: the run resumed and completed");
  },

  async "reload-while-paused"(page) {
    await say(page, "check out");
    await page.getByTestId("approval").waitFor({ timeout: STEP_MS });
    await idle(page);
    await page.reload();
    await chat(page).getByTestId("copilot-chat-textarea").waitFor({ timeout: STEP_MS });
    await sees(page, "check out");
    const approval = page.getByTestId("approval");
    await approval.waitFor({ timeout: STEP_MS });
    step("reloaded: approval shown again");
    await approval.getByRole("button", { name: "Approve" }).click();
    await approval.waitFor({ state: "detached", timeout: STEP_MS });
    await sees(page, "order 1", page.getByTestId("orders"));
    await idle(page);
    step("approved after the reload: the run resumed and completed");
  },

  async "shared-state"(page) {
    await say(page, "add buy milk");
    await sees(page, "buy milk", page.getByTestId("todos"));
    await sees(page, "Added buy milk.");
    await idle(page);
    step("the tool's change shown by useAgent");
    await page.getByRole("button", { name: 'Add "walk the dog"' }).click();
    await sees(page, "walk the dog", page.getByTestId("todos"));
    step("the person added a todo");
    await say(page, "list my todos");
    await sees(page, "Your todos: buy milk, walk the dog.");
    await idle(page);
    step("the next run saw the person's edit");
  },
};

await openPage(chromium, { base, result, profilePrefix: "pyox-ckruntime-chromium-", viewport: { width: 1200, height: 800 } }, async (page) => {
  try {
    await page.goto(base);
    await chat(page).getByTestId("copilot-chat-textarea").waitFor({ timeout: STEP_MS });
    await idle(page);
    step("page loaded");
    await scenarios[scenario](page);
    result.threadId = await page.getByTestId("thread").textContent();
    result.ok = true;
  } catch (e) {
    result.error = failure(e);
  }
  result.screenshot = join(artifacts, `copilotkit-runtime-${scenario}.png`);
  await page.screenshot({ path: result.screenshot, fullPage: true });
});
