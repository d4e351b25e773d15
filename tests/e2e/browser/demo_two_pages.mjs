// Two windows of the built demo page on one thread, in Debian's Chromium (playwright-core), for
// each view: the person edits the todo list in both while the agent works, and between runs.
//
//   node tests/e2e/browser/demo_two_pages.mjs <base-url> <views: ag-ui,ai-sdk,copilotkit> <artifacts-dir> [<base-url-2>]
//   (with base-url-2, page 2 opens the same thread on that server: another process, one store)
//
// For each view, in one browser (a context reused by every view):
//   1. page 1 adds three todos to a new thread (no run yet: they go with its first run) and asks
//      the agent to add milk to the cart;
//   2. page 2 is opened with page 1's "Open in a second window" link: the same thread;
//   3. idle: page 2 adds a todo, page 1 shows it without reloading;
//   4. page 1 asks the agent to add eggs and bread; while the run goes (both pages say so),
//      each page adds a todo, ticks one and deletes one;
//   5. once the run ended and all is quiet: what each page shows and GET /threads/{id}'s state;
//   6. page 2 adds a todo too long for the server's state size limit: refused, and said.
// Prints ONE JSON line: {ok, error, consoleErrors, offsite, screenshots, views: {<view>: {ok,
// steps, error, threadId, runningAfterEdits: [page 1, page 2], idleFollowed, pages: [state,
// state], server, refused: [[texts], [texts]], refusal: {shown, page1, page2, server}, timing: {bothSawTheRun, edited, runEnded} (seconds
// after asking)}}}. Exit 0 even when a step fails (the test
// asserts); 1 when the script itself broke.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { failure, openPage } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "..", "..", "frontend-demo", "package.json"));
const { chromium } = require("playwright-core");

const [base, viewList, artifacts, base2] = process.argv.slice(2);
const STEP_MS = Number(process.env.STEP_MS || 15000);
const LONG = Number(process.env.LONG_TODO || 5000); // characters: past the test server's state_bytes
mkdirSync(artifacts, { recursive: true });
const result = { ok: false, error: null, consoleErrors: [], failedRequests: [], offsite: [], screenshots: [], views: {} };

const item = (page, list, text) => page.getByTestId(list).locator(".row", { hasText: text });
const status = (page) => page.getByTestId("live-status");

async function say(page, view, text) {
  const chat = page.getByTestId("chat");
  const input = view === "copilotkit" ? chat.getByTestId("copilot-chat-textarea") : chat.getByLabel("Message");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

async function addTodo(page, text) {
  await page.getByLabel("New todo").fill(text);
  await page.getByLabel("New todo").press("Enter");
  // (first: for a moment, until the server answers the edit, a page may show it twice: its
  // own copy on top of the version the feed brought with it)
  await item(page, "todos", text).first().waitFor({ timeout: STEP_MS });
}

async function tick(page, text) {
  await page.getByLabel(`done: ${text}`).check({ timeout: STEP_MS });
}

async function remove(page, text) {
  await item(page, "todos", text).getByTitle("Remove").click({ timeout: STEP_MS });
  await item(page, "todos", text).waitFor({ state: "detached", timeout: STEP_MS });
}

/** Waits until the page says whether a run goes on the thread (its own, or another window's). */
async function running(page, yes) {
  await page.locator(`[data-testid=live-status][data-running=${yes}]`).waitFor({ timeout: STEP_MS });
}

/** The state the page's board shows (its state panel's JSON). */
async function shown(page) {
  return JSON.parse(await page.getByTestId("state-json").textContent());
}

async function kept(threadId) {
  const response = await fetch(`${base}/threads/${encodeURIComponent(threadId)}`);
  if (!response.ok) throw new Error(`GET /threads/${threadId} answered ${response.status}`);
  return (await response.json()).state;
}

/** JSON with its keys sorted: equal values give equal strings. */
function canon(value) {
  if (Array.isArray(value)) return `[${value.map(canon).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canon(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Waits (re-reading) until both pages and the server hold one state; gives the three. */
async function agreed(pages, threadId) {
  const deadline = Date.now() + STEP_MS;
  while (true) {
    const states = [await shown(pages[0]), await shown(pages[1]), await kept(threadId)];
    if (new Set(states.map(canon)).size === 1 || Date.now() > deadline) return states;
    await pages[0].waitForTimeout(100);
  }
}

async function refusals(page) {
  return page.getByTestId("refused").allTextContents();
}

async function shot(page, name) {
  const path = join(artifacts, `two-pages-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  result.screenshots.push(path);
}

function watch(page) {
  page.on("console", (m) => {
    if (m.type() === "error") result.consoleErrors.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => result.consoleErrors.push(`pageerror: ${e.message}`));
  page.on("response", (r) => {
    if (r.status() >= 400) result.failedRequests.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
  });
}

async function twoPages(context, view) {
  const report = { ok: false, steps: [], error: null, threadId: null, runningAfterEdits: null, idleFollowed: false,
                   pages: null, server: null, refused: null, refusal: null };
  result.views[view] = report;
  const pages = [];
  try {
    const one = await context.newPage();
    pages.push(one);
    watch(one);
    await one.goto(`${base}/#${view}`);
    await one.getByTestId("todos").waitFor({ timeout: STEP_MS });
    await one.getByTestId("chat").waitFor({ timeout: STEP_MS });
    if (view === "copilotkit") await one.getByTestId("copilot-chat-textarea").waitFor({ timeout: STEP_MS });

    // 1. A new thread: three todos, then a run.
    for (const text of ["walk the dog", "water the plants", "pay the rent"]) await addTodo(one, text);
    await say(one, view, "add milk to my cart");
    await item(one, "cart", "milk").waitFor({ timeout: STEP_MS });
    await running(one, false);
    await one.locator("[data-testid=live-status]:not([data-version=''])").waitFor({ timeout: STEP_MS });
    report.steps.push("a new thread: three todos, milk added by the agent");

    // 2. The same thread in a second window, from the page's link.
    const link = one.getByTestId("second-window");
    report.threadId = decodeURIComponent((await link.getAttribute("href")).split("/")[1]);
    const [two] = await Promise.all([context.waitForEvent("page", { timeout: STEP_MS }), link.click()]);
    pages.push(two);
    watch(two);
    await two.waitForLoadState();
    if (base2) await two.goto(`${base2}/${await link.getAttribute("href")}`); // another server process
    for (const text of ["walk the dog", "water the plants", "pay the rent"]) await item(two, "todos", text).waitFor({ timeout: STEP_MS });
    await item(two, "cart", "milk").waitFor({ timeout: STEP_MS });
    await two.locator("[data-testid=live-status]:not([data-version=''])").waitFor({ timeout: STEP_MS });
    report.steps.push("second window: the same thread");

    // 3. Idle: an edit in page 2 shows in page 1, which does not reload.
    let reloaded = false;
    one.on("load", () => { reloaded = true; });
    await addTodo(two, "idle todo from page 2");
    await item(one, "todos", "idle todo from page 2").waitFor({ timeout: STEP_MS });
    report.idleFollowed = !reloaded;
    report.steps.push("idle: page 2's todo shown in page 1");

    // 4. A run, and both pages editing while it goes.
    await say(one, view, "add eggs and bread to my cart");
    const asked = Date.now();
    const since = () => (Date.now() - asked) / 1000;
    await Promise.all([running(one, true), running(two, true)]);
    report.timing = { bothSawTheRun: since() };
    await Promise.all([
      (async () => {
        await addTodo(one, "buy stamps");
        await tick(one, "walk the dog");
        await remove(one, "pay the rent");
      })(),
      (async () => {
        await addTodo(two, "fix the bike");
        await tick(two, "water the plants");
        await remove(two, "idle todo from page 2");
      })(),
    ]);
    report.runningAfterEdits = [
      (await status(one).getAttribute("data-running")) === "true",
      (await status(two).getAttribute("data-running")) === "true",
    ];
    report.timing.edited = since();
    report.steps.push("both pages edited while the agent worked");

    // 5. Once the run ended: both pages and the server.
    await Promise.all([running(one, false), running(two, false)]);
    report.timing.runEnded = since();
    await Promise.all(["eggs", "bread"].map((name) => item(one, "cart", name).waitFor({ timeout: STEP_MS })));
    const [first, second, server] = await agreed(pages, report.threadId);
    report.pages = [first, second];
    report.server = server;
    report.refused = [await refusals(one), await refusals(two)];
    report.steps.push("after the run: both pages and the server read");

    // 6. An edit the server refuses (a todo past the server's state size limit): page 2 says so,
    // and shows the thread's state again, as page 1 and the server have it.
    const long = `a very long todo ${"x".repeat(LONG)}`;
    await two.getByLabel("New todo").fill(long);
    await two.getByLabel("New todo").press("Enter");
    const notice = two.getByTestId("refused");
    await notice.waitFor({ timeout: STEP_MS });
    await item(two, "todos", "a very long todo").waitFor({ state: "detached", timeout: STEP_MS });
    report.refusal = {
      shown: await notice.textContent(),
      page1: (await shown(one)).todos.some((t) => t.text === long),
      page2: (await shown(two)).todos.some((t) => t.text === long),
      server: (await kept(report.threadId)).todos.some((t) => t.text === long),
    };
    report.steps.push("a refused edit: said, and undone on the page");
    await shot(one, `${view}-page-1`);
    await shot(two, `${view}-page-2`);
    report.ok = true;
  } catch (e) {
    report.error = failure(e);
    for (const [i, page] of pages.entries()) {
      try {
        await shot(page, `${view}-failed-page-${i + 1}`);
      } catch {}
    }
  } finally {
    for (const page of pages) await page.close();
  }
}

await openPage(chromium, { base, result, profilePrefix: "pyox-two-pages-" }, async (first) => {
  try {
    const context = first.context();
    await context.route("**/*", (route) => {
      const url = route.request().url();
      const ours = [base, base2].filter(Boolean).some((b) => url.startsWith(new URL(b).origin));
      if (ours || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
      result.offsite.push(url);
      return route.abort();
    });
    for (const view of viewList.split(",")) {
      const started = Date.now();
      await twoPages(context, view);
      result.views[view].seconds = (Date.now() - started) / 1000;
    }
    result.ok = Object.values(result.views).every((v) => v.ok);
  } catch (e) {
    result.error = failure(e);
  }
});
