// Writes pyox_agents/server/static/build-stamp.json (`--check`: only tells whether it matches): a hash of the page's sources and lock file,
// so tests/test_demo_build.py can tell when the committed build is older than frontend-demo/.
// The Python test recomputes the hash the same way: sha256 over, for each file in sorted order,
// its path relative to frontend-demo/ (with "/"), a NUL byte, its bytes, a NUL byte. The page
// bundles the repository's live-state client from source, so its code counts too.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const FILES = ["index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts"];
const DIRS = ["src", "scripts"];
const CLIENT = ["../clients/live-state/index.js"];

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

export function sourceHash() {
  const paths = [...FILES.map((f) => join(root, f)), ...DIRS.flatMap((d) => walk(join(root, d))),
                 ...CLIENT.map((f) => join(root, f))]
    .map((p) => relative(root, p).split(sep).join("/"))
    .sort();
  const hash = createHash("sha256");
  for (const path of paths) {
    hash.update(path);
    hash.update("\0");
    hash.update(readFileSync(join(root, path)));
    hash.update("\0");
  }
  return { hash: hash.digest("hex"), files: paths.length };
}

const { hash, files } = sourceHash();
const out = join(root, "..", "pyox_agents", "server", "static", "build-stamp.json");
if (process.argv.includes("--check")) { // `make demo`: exit 1 when the page must be built again
  let kept = null;
  try { kept = JSON.parse(readFileSync(out, "utf8")).sources_sha256; } catch { /* none yet */ }
  process.exit(kept === hash ? 0 : 1);
}
writeFileSync(out, JSON.stringify({ sources_sha256: hash, files }, null, 2) + "\n");
console.log(`build-stamp.json: ${files} files, sha256 ${hash.slice(0, 12)}…`);
