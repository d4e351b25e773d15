// Drives the page (page/App.tsx, served with the runtime by server.ts) in Debian's Chromium with
// playwright-core, like a person would, for one scenario:
//
//   node drive.mjs <base-url> <chat|frontend-tool|interrupt|shared-state|production> <artifacts-dir> [control-url]
//
// `production` needs the test's control URL: POST <control-url>/await-work answers once a run
// is in the server's `work_slowly` tool, /open-gate lets that tool finish, /restart-runtime
// restarts the Node runtime.
//
// Prints ONE JSON line: {ok, scenario, steps: [names done], error, consoleErrors, offsite:
// [requests to other hosts], screenshot, threadId}. Exit 0 even when a step fails (the Python test asserts
// on `ok`); exit 1 only when the script itself broke.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { failure, openPage } from "../browser/chromium.mjs";

const [base, scenario, artifacts, control] = process.argv.slice(2);
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

async function running(page) {
  await page.getByTestId("running").getByText("running").waitFor({ timeout: STEP_MS });
}

// Asks the test (the Python side) to wait for the slow tool, open its gate or restart the runtime.
async function ask(what) {
  const response = await fetch(`${control}/${what}`, { method: "POST" });
  if (!response.ok) throw new Error(`${what}: ${response.status} ${await response.text()}`);
}

// The chat's input is there and the page is connected again.
async function loaded(page) {
  await chat(page).getByTestId("copilot-chat-textarea").waitFor({ timeout: STEP_MS });
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

  // The page behind the runtime with PyoxAgentRunner: the server, not the runtime's memory,
  // keeps the thread (the runtime restarts twice).
  async production(page) {
    const todos = page.getByTestId("todos");
    const threads = page.getByTestId("threads");
    await say(page, "add buy milk");
    await sees(page, "buy milk", todos);
    await idle(page);
    await sees(page, "add buy milk", threads);
    if ((await threads.getByText("bob's plans").count()) !== 0) throw new Error("another person's thread is listed");
    step("the thread list shows the person's threads only");

    await say(page, "work slowly");
    await running(page);
    await ask("await-work"); // the server runs it
    const address = page.url();
    await page.goto("about:blank"); // the tab is closed mid-run
    await ask("restart-runtime");
    await page.goto(address);
    await loaded(page);
    await sees(page, "work slowly");
    await sees(page, "buy milk", todos);
    await running(page);
    await ask("open-gate");
    await sees(page, "Done slowly.");
    await idle(page);
    step("reopened mid-run after a runtime restart: messages and state back, the run followed to its end");

    await say(page, "check out");
    const approval = page.getByTestId("approval");
    await approval.waitFor({ timeout: STEP_MS });
    await idle(page);
    await ask("restart-runtime");
    await page.reload();
    await loaded(page);
    await sees(page, "check out");
    await approval.waitFor({ timeout: STEP_MS });
    step("reloaded while paused after a runtime restart: the approval shown again");
    await approval.getByRole("button", { name: "Approve" }).click();
    await approval.waitFor({ state: "detached", timeout: STEP_MS });
    await sees(page, "order 1", page.getByTestId("orders"));
    await sees(page, "Your order is placed.");
    await idle(page);
    step("approved: the run resumed and completed");

    await say(page, "work slowly");
    await running(page);
    await ask("await-work");
    await chat(page).getByTestId("copilot-send-button").click(); // the stop button while a run goes on
    await idle(page);
    step("stopped: the run ended");
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
