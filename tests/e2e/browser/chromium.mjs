// What every browser script here does around its scenario: start Debian's Chromium with a fresh
// profile, collect the page's console errors and its requests to other hosts, and print the
// script's ONE JSON result line however the run ends.
//
//   import { openPage, failure, CHROMIUM } from "../browser/chromium.mjs";
//   await openPage(chromium, { base, result, profilePrefix: "pyox-x-" }, async (page) => { ... });
//
// `chromium` is playwright-core's launcher, passed in because the scripts take playwright-core
// from different node_modules. `result` must have `consoleErrors` and `offsite` arrays.
// `contrast(locator)` measures how readable a button is (WCAG).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The Chromium binary: $CHROMIUM, or Debian's. */
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** The first lines of an error's message, for the result's `error`. */
export const failure = (e) => String(e && e.message ? e.message : e).split("\n").slice(0, 6).join("\n");

// Console errors and page errors go to result.consoleErrors; a request that leaves `base`'s
// origin (and the origins of `also`) is aborted and listed in result.offsite (this machine has
// no network: say what the page asked for, fast).
async function watch(page, base, result, also) {
  const origins = [base, ...also].map((url) => new URL(url).origin);
  page.on("console", (m) => {
    if (m.type() === "error") result.consoleErrors.push(m.text());
    else if (m.type() === "warning" && result.consoleWarnings) result.consoleWarnings.push(m.text());
  });
  page.on("pageerror", (e) => result.consoleErrors.push(`pageerror: ${e.message}`));
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (origins.some((origin) => url.startsWith(origin)) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    result.offsite.push(url);
    return route.abort();
  });
}

/**
 * Runs `drive(page)` in a watched page of a fresh headless Chromium profile (no localStorage
 * from an earlier run), then closes the browser, removes the profile and prints `result` as one
 * JSON line. `drive` records a failed step in `result` itself; anything it throws means the
 * script broke: printed to stderr, exit code 1. `also`: the URLs of other servers the page may
 * call (a page served apart from its API).
 */
export async function openPage(chromium, { base, also = [], result, profilePrefix, viewport = { width: 1400, height: 900 } }, drive) {
  const profile = mkdtempSync(join(tmpdir(), profilePrefix));
  let browser;
  try {
    browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, viewport, args: ARGS });
    const page = browser.pages()[0] ?? (await browser.newPage());
    await watch(page, base, result, also);
    await drive(page);
  } catch (e) {
    console.error(e);
    process.exitCode = 1;
  } finally {
    if (browser) await browser.close();
    rmSync(profile, { recursive: true, force: true });
    console.log(JSON.stringify(result));
  }
}

/** The WCAG contrast ratio (2 decimals) of an element's text on its background (the first
 * opaque one up the tree): a person must be able to read what they click (AA: 4.5). */
export async function contrast(locator) {
  const ratio = await locator.evaluate((el) => {
    const canvas = document.createElement("canvas"); // any CSS color (oklch too) to sRGB
    canvas.width = canvas.height = 1;
    const paint = canvas.getContext("2d", { willReadFrequently: true });
    const rgba = (css) => {
      paint.clearRect(0, 0, 1, 1);
      paint.fillStyle = "rgba(0, 0, 0, 0)";
      paint.fillStyle = css;
      paint.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = paint.getImageData(0, 0, 1, 1).data;
      return [r, g, b, a / 255];
    };
    const luminance = ([r, g, b]) => {
      const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
    };
    let node = el;
    let background = [255, 255, 255];
    while (node && node.nodeType === 1) {
      const color = rgba(getComputedStyle(node).backgroundColor);
      if (color[3] > 0.5) { background = color; break; }
      node = node.parentElement;
    }
    const [a, b] = [luminance(rgba(getComputedStyle(el).color)), luminance(background)];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
  return Math.round(ratio * 100) / 100;
}

/**
 * The serious and critical accessibility violations axe-core finds on the page as it is now
 * (`require` finds axe-core: frontend-demo's packages): [{id, impact, help, nodes: [selector]}].
 * Injected inline (the page asks no other host), run on the whole document.
 */
export async function accessibility(page, require) {
  const source = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  await page.addScriptTag({ content: source });
  return page.evaluate(async () => {
    const { violations } = await window.axe.run(document, { resultTypes: ["violations"] });
    return violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")) }));
  });
}
