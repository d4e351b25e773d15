import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The page is built into the Python package, so `pip install pyox-agents` serves it without Node.
// `npm run dev` proxies the API to a `pyox-agents demo` running on port 8000.
const api = { target: "http://127.0.0.1:8000", changeOrigin: false };

export default defineConfig({
  plugins: [react()],
  base: "./",
  build: {
    outDir: "../pyox_agents/server/static",
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
  },
  server: { proxy: { "/agents": api, "/threads": api, "/runs": api, "/healthz": api } },
});
