// A CopilotKit v2 page that reaches the agent only through the CopilotKit runtime
// (`<CopilotKit runtimeUrl=...>`): the runtime (runtime.ts) forwards to the pyox-agents server.
import { createRoot } from "react-dom/client";
import { App } from "./App";

createRoot(document.getElementById("root")!).render(<App />);
