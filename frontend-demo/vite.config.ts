import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The page is built into the Python package, so `pip install pyox-agents` serves it without Node.
// `npm run dev` proxies the API to a `pyox-agents demo` running on port 8000.
const api = { target: "http://127.0.0.1:8000", changeOrigin: false };
const lean = (file: string) => decodeURIComponent(new URL(`./src/lean/${file}`, import.meta.url).pathname);

export default defineConfig({
  plugins: [react()],
  base: "./",
  resolve: {
    // CopilotKit's markdown renderer (Streamdown) pulls in Shiki, Mermaid and KaTeX; the demo's
    // agent writes plain prose, so small stand-ins replace them (src/lean/README.md).
    alias: [
      { find: /^\.\/code-block-[A-Z0-9]+\.js$/, replacement: lean("CodeBlock.tsx") },
      { find: /^mermaid$/, replacement: lean("mermaid.ts") },
      { find: /^rehype-katex$/, replacement: lean("rehypeKatex.ts") },
      { find: /^katex\/dist\/katex\.min\.css$/, replacement: lean("empty.css") },
    ],
  },
  build: {
    outDir: "../pyox_agents/server/static",
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
  },
  server: {
    proxy: { "/agents": api, "/threads": api, "/runs": api, "/healthz": api },
    // The page imports the repository's live-state client (../clients/live-state) from source.
    fs: { allow: [".", "../clients/live-state"] },
  },
});
