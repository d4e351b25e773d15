// Drives one page of the demo's feature gallery in Debian's Chromium with playwright-core, as a
// person would, and checks what they see.
//
//   node tests/e2e/browser/gallery.mjs <base-url> <page> <artifacts-dir>
//
// <page> is one of the seven (agentic-chat, backend-tool-rendering, human-in-the-loop,
// agentic-generative-ui, tool-based-generative-ui, shared-state, predictive-state-updates).
// Prints ONE JSON line: {ok, page, steps, error, consoleErrors, offsite, screenshots, seen}
// (seen: what the page showed, the buttons' contrast, axe-core's serious and critical findings
// once the scenario ran, its width on a 390 px phone).
// Exit 0 even when a step fails (the Python test asserts on `ok`); 1 when the script broke.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { accessibility, contrast, failure, openPage } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const require = createRequire(join(repo, "frontend-demo", "package.json"));
const { chromium } = require("playwright-core");

const [base, pageName, artifacts] = process.argv.slice(2);
const STEP_MS = Number(process.env.STEP_MS || 20000);
mkdirSync(artifacts, { recursive: true });

const result = { ok: false, page: pageName, steps: [], error: null, consoleErrors: [], consoleWarnings: [], offsite: [], screenshots: [], seen: {} };

const step = (name) => result.steps.push(name);

async function shot(page, name) {
  const path = join(artifacts, `gallery-${pageName}-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  result.screenshots.push(path);
}

const said = [];

async function say(page, text) {
  said.push(text);
  const input = page.getByTestId("chat").locator("textarea, input[type=text]").first();
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

async function idle(page) {
  await page.waitForTimeout(300);
  await page.waitForFunction(() => !document.querySelector("[data-testid=chat] [data-copilot-running=true]"), null, { timeout: STEP_MS });
}

// The WCAG contrast ratio of a button's text on its background (the first opaque one up the
// tree), noted in result.seen.contrast[name]: a person must be able to read what they click.
async function noteContrast(button, name) {
  (result.seen.contrast ??= {})[name] = await contrast(button);
}

const chatSays = (page, text) => page.getByTestId("chat").getByText(text).first().waitFor({ timeout: STEP_MS });

// Records, in the page, every value `read(element)` takes while `selector` is on the page.
async function record(page, name, selector, read) {
  await page.evaluate(
    ([name, selector, read]) => {
      const values = (window[name] = []);
      const look = () => {
        const el = document.querySelector(selector);
        if (!el) return;
        const value = new Function("el", `return (${read})(el)`)(el);
        if (values[values.length - 1] !== value) values.push(value);
      };
      new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    },
    [name, selector, read],
  );
}

const scenarios = {
  async "agentic-chat"(page) {
    await say(page, "change the background to teal");
    await page.waitForFunction(() => getComputedStyle(document.querySelector("[data-testid=stage]")).backgroundColor === "rgb(0, 128, 128)", null, { timeout: STEP_MS });
    step("the page's tool changed the background");
    await chatSays(page, "Done: the background is now teal");
    await idle(page);
    step("the run went on with the tool's answer");
    await say(page, "what is my name?");
    await chatSays(page, "Your name is Ada.");
    await idle(page);
    step("the agent read the page's context");
    await say(page, "what did the page forward?");
    await chatSays(page, '{"page": "agentic-chat"}');
    await idle(page);
    step("the agent read the forwarded properties");
  },

  async "backend-tool-rendering"(page) {
    await say(page, "what's the weather in Paris?");
    const card = page.getByTestId("chat").locator("[data-testid=weather-card][data-status=complete]");
    await card.waitFor({ timeout: STEP_MS });
    const text = await card.innerText();
    if (!/Paris/.test(text) || !/-?\d+°C/.test(text)) throw new Error(`the weather card shows ${JSON.stringify(text)}`);
    result.seen.card = text;
    step("the weather card shows the tool's JSON result");
    await chatSays(page, /°C and .* in Paris\./);
    await idle(page);
    step("the agent said the weather");
  },

  async "human-in-the-loop"(page) {
    await say(page, "plan a trip to Mars");
    const picker = page.getByTestId("chat").locator("[data-testid=step-picker]").last();
    await picker.getByRole("button", { name: "Confirm" }).waitFor({ timeout: STEP_MS });
    await noteContrast(picker.getByRole("button", { name: "Confirm" }), "Confirm");
    step("the page asks which steps to take");
    await picker.getByLabel("step: train the crew").uncheck();
    await shot(page, "1-asked");
    await picker.getByRole("button", { name: "Confirm" }).click();
    await chatSays(page, "Going ahead with 4 steps: build the rocket, load the supplies, launch, land on Mars.");
    await idle(page);
    step("the run went on with the person's answer");
    await say(page, "book a flight to Paris");
    const approval = page.getByTestId("approval").last();
    await approval.getByRole("button", { name: "Approve" }).waitFor({ timeout: STEP_MS });
    await noteContrast(approval.getByRole("button", { name: "Approve" }), "Approve");
    step("the booking waits for approval");
    await shot(page, "2-approval");
    await approval.getByRole("button", { name: "Approve" }).click();
    await chatSays(page, /Done: booked flight PX\d+ to Paris/);
    await idle(page);
    step("the approved run resumed and booked the flight");
  },

  async "agentic-generative-ui"(page) {
    await record(page, "__done", "[data-testid=task-panel] [data-testid=task-steps]", "(el) => el.dataset.done + '/' + el.dataset.total");
    await say(page, "make pancakes");
    const panel = page.getByTestId("task-panel").locator("[data-testid=task-steps]");
    await panel.waitFor({ timeout: STEP_MS });
    step("the task's steps appeared");
    await page.getByTestId("task-panel").locator("[data-testid=task-steps][data-done='5']").waitFor({ timeout: STEP_MS });
    const seen = await page.evaluate(() => window.__done);
    result.seen.progress = seen;
    if (!seen.some((v) => /^[1-4]\/5$/.test(v))) throw new Error(`no step was seen done while others were not: ${seen}`);
    step("the steps completed one by one, live");
    await chatSays(page, "Done! Pancakes: all 5 steps done.");
    await idle(page);
    await shot(page, "1-done");
    step("the agent finished the task");
  },

  async "tool-based-generative-ui"(page) {
    await say(page, "write a haiku about autumn");
    const haiku = page.getByTestId("chat").locator("[data-testid=haiku]").last();
    await haiku.getByText("the leaves dance down").waitFor({ timeout: STEP_MS });
    await haiku.getByText("秋の風").waitFor({ timeout: STEP_MS });
    step("the page drew the haiku from the tool's arguments");
    await chatSays(page, "Here is your haiku.");
    await idle(page);
    step("the run went on with the page's answer");
  },

  async "shared-state"(page) {
    const list = page.getByTestId("shared-list");
    const todo = (text) => list.locator("[data-testid=shared-todo]", { hasText: text });
    for (const text of ["walk the dog", "water the plants"]) {
      await list.getByLabel("New todo").fill(text);
      await list.getByLabel("New todo").press("Enter");
      await todo(text).waitFor({ timeout: STEP_MS });
    }
    await list.getByLabel("done: walk the dog").check();
    step("the person added two todos and ticked one");
    await say(page, "clear completed");
    await todo("walk the dog").waitFor({ state: "detached", timeout: STEP_MS });
    await idle(page);
    step("the agent cleared the todo the person ticked");
    await say(page, "add call mom to my list");
    await todo("call mom").waitFor({ timeout: STEP_MS });
    await idle(page);
    const texts = await list.locator("[data-testid=shared-todo]").allInnerTexts();
    result.seen.todos = texts;
    if (texts.map((t) => t.trim()).join("|") !== "water the plants|call mom") throw new Error(`the list is ${JSON.stringify(texts)}`);
    step("the agent added a todo beside the person's");
  },

  async "predictive-state-updates"(page) {
    await record(page, "__lengths", "[data-testid=document-card]", "(el) => el.querySelector('[data-testid=document-status]').textContent + ':' + (el.querySelector('[data-testid=document] .empty') ? 0 : el.querySelector('[data-testid=document]').textContent.length)");
    await say(page, "write a story about a lighthouse");
    const doc = page.getByTestId("document");
    await doc.getByText("A story about a lighthouse").waitFor({ timeout: STEP_MS });
    step("the document appeared while the tool's argument streamed");
    const confirm = () => page.getByTestId("chat").locator("[data-testid=confirm-changes][data-status=executing]").last();
    await confirm().getByRole("button", { name: "Keep" }).waitFor({ timeout: STEP_MS });
    await noteContrast(confirm().getByRole("button", { name: "Keep" }), "Keep");
    const story = (await doc.textContent()) ?? "";
    if (!story.endsWith("stopped for a moment to look.")) throw new Error(`the document ends ${JSON.stringify(story.slice(-60))}`);
    const seen = await page.evaluate(() => window.__lengths);
    result.seen.lengths = seen;
    const growing = [...new Set(seen.filter((v) => v.startsWith("the agent is writing")).map((v) => Number(v.split(":")[1])))].filter((n) => n > 0 && n < story.length);
    if (growing.length < 3) throw new Error(`the document did not grow while it was written: ${seen}`);
    step("the document grew while the argument streamed, then was committed");
    await shot(page, "1-written");
    await confirm().getByRole("button", { name: "Keep" }).click();
    await chatSays(page, "Kept: the document is saved.");
    await idle(page);
    step("the person kept the change");
    await say(page, "write a poem about the sea");
    await doc.getByText("A poem about the sea").waitFor({ timeout: STEP_MS });
    await confirm().getByRole("button", { name: "Undo" }).click();
    await chatSays(page, "Undone: the document is as it was.");
    await doc.getByText("A story about a lighthouse").waitFor({ timeout: STEP_MS });
    await idle(page);
    if (((await doc.textContent()) ?? "") !== story) throw new Error("the undo did not put the story back");
    step("the person undid the next change: the story is back");
  },
};

// What else each page shows again after a reload.
const afterReload = {
  async "agentic-chat"(page) {
    await chatSays(page, "Your name is Ada.");
  },
  async "shared-state"(page) {
    const texts = page.getByTestId("shared-list").locator("[data-testid=shared-todo]");
    await texts.filter({ hasText: "call mom" }).waitFor({ timeout: STEP_MS });
    const all = (await texts.allInnerTexts()).map((t) => t.trim()).join("|");
    if (all !== "water the plants|call mom") throw new Error(`after a reload the list is ${all}`);
  },
  async "predictive-state-updates"(page) {
    await page.getByTestId("document").getByText("stopped for a moment to look.").waitFor({ timeout: STEP_MS });
  },
};

await openPage(chromium, { base, result, profilePrefix: "pyox-gallery-chromium-" }, async (page) => {
  try {
    if (!scenarios[pageName]) throw new Error(`no page ${pageName}; pages: ${Object.keys(scenarios).join(", ")}`);
    await page.goto(`${base}/#gallery/${pageName}`);
    await page.getByTestId(`page-${pageName}`).getByTestId("chat").waitFor({ timeout: STEP_MS });
    step("page loaded");
    await scenarios[pageName](page);
    await shot(page, "final");
    result.seen.accessibility = await accessibility(page, require); // axe-core: serious, critical
    // A reload comes back to the page's thread (ConnectingAgent -> POST /ag-ui/connect).
    await page.reload();
    await page.getByTestId(`page-${pageName}`).getByTestId("chat").waitFor({ timeout: STEP_MS });
    for (const text of [said[0], said[said.length - 1]]) await chatSays(page, text);
    if (afterReload[pageName]) await afterReload[pageName](page);
    step("reloaded: the thread came back");
    // On a phone (390 px wide), the page and the demo's first view fit the screen's width.
    await page.setViewportSize({ width: 390, height: 844 });
    result.seen.widthOnAPhone = { [pageName]: await page.evaluate(() => document.documentElement.scrollWidth) };
    if (pageName === "agentic-chat") {
      await page.goto(`${base}/#ag-ui`);
      await page.getByTestId("todos").waitFor({ timeout: STEP_MS });
      result.seen.widthOnAPhone["ag-ui"] = await page.evaluate(() => document.documentElement.scrollWidth);
      await shot(page, "phone");
    }
    result.ok = true;
  } catch (e) {
    result.error = failure(e);
    try {
      await shot(page, "failed");
    } catch {}
  }
});
