// The test's Node server: the CopilotKit runtime of runtime.ts under /api/copilotkit, and the
// built page (dist/) everywhere else, on one origin. Listens on 127.0.0.1 on $PORT (a free port
// without it: a restart passes the port it had) and prints {"url": "http://127.0.0.1:<port>"}
// once it listens.
//
//   PYOX_AGENTS_URL=http://127.0.0.1:8000 [PORT=4000] node out/server.js
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { copilotkit } from "./runtime.js";

const DIST = new URL("../dist/", import.meta.url);
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
};

const server = createServer((req, res) => {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path.startsWith("/api/copilotkit")) {
    void copilotkit(req, res);
    return;
  }
  const file = new URL(path === "/" ? "index.html" : `.${path}`, DIST);
  if (!file.href.startsWith(DIST.href)) {
    res.writeHead(404).end();
    return;
  }
  readFile(file).then(
    (body) => res.writeHead(200, { "content-type": TYPES[extname(file.pathname)] ?? "application/octet-stream" }).end(body),
    () => res.writeHead(404, { "content-type": "text/plain" }).end(`not found: ${path}`),
  );
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }));
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
