// Agentic chat: the page offers a tool that runs in the browser (`useFrontendTool`), tells the
// agent who the person is (`useAgentContext`) and forwards its properties (`forwardedProps`).

import { useState } from "react";
import { z } from "zod";
import { useAgentContext, useFrontendTool } from "@copilotkit/react-core/v2";
import { FeaturePage, Try } from "./frame";

const AGENT = "agentic_chat";
const PROVIDER = { properties: { page: "agentic-chat" } }; // forwarded as `forwardedProps`

export default function AgenticChat() {
  const [background, setBackground] = useState("#f6f8fa");
  return (
    <FeaturePage agentId={AGENT} hint="Ask the agent to change the background…" provider={PROVIDER}>
      <Tools onBackground={setBackground} />
      <section className="card stage" data-testid="stage" style={{ background }}>
        {/* on a light card of its own: readable on whatever background the agent chose */}
        <div className="stage-text">
          <h2>Agentic chat</h2>
          <p>The agent calls the page's own tool <code>change_background</code>; the page runs it and the run goes on with its answer.</p>
          <p>The page tells the agent your name (Ada) as context, and forwards <code>{'{"page": "agentic-chat"}'}</code>.</p>
          <Try phrases={["change the background to teal", "what is my name?", "what did the page forward?"]} />
        </div>
      </section>
    </FeaturePage>
  );
}

function Tools({ onBackground }: { onBackground: (background: string) => void }) {
  useAgentContext({ description: "The person's name", value: "Ada" });
  useFrontendTool({
    name: "change_background",
    description: "Change the page's background: any CSS background (a colour name, a hex code, a gradient).",
    parameters: z.object({ background: z.string().describe("the CSS background") }),
    handler: async ({ background }) => {
      onBackground(background);
      return `the background is now ${background}`;
    },
  });
  return null;
}
