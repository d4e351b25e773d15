import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The test page, built into dist/ and served by server.mjs next to the runtime.
export default defineConfig({
  plugins: [react()],
  root: "page",
  base: "./",
  build: { outDir: "../dist", emptyOutDir: true, chunkSizeWarningLimit: 8000 },
});
