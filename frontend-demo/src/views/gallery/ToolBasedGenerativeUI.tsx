// Tool-based generative UI: the page offers `generate_haiku` (`useFrontendTool` with a
// `render`): the agent fills its arguments and the page draws them as a card.

import { z } from "zod";
import { useFrontendTool } from "@copilotkit/react-core/v2";
import { FeaturePage, Try } from "./frame";

const AGENT = "tool_based_generative_ui";

function HaikuCard({ japanese, english, status }: { japanese?: string[]; english?: string[]; status: string }) {
  return (
    <div className="haiku" data-testid="haiku" data-status={status}>
      <div className="haiku-ja">
        {(japanese ?? []).map((line, i) => (
          <div key={i}>{line}</div>
        ))}
      </div>
      <div className="haiku-en">
        {(english ?? []).map((line, i) => (
          <div key={i}>{line}</div>
        ))}
      </div>
    </div>
  );
}

export default function ToolBasedGenerativeUI() {
  return (
    <FeaturePage agentId={AGENT} hint="Ask for a haiku…">
      <Tool />
      <section className="card">
        <h2>Tool-based generative UI</h2>
        <p>The page offers the tool <code>generate_haiku</code> with a render: the agent writes the haiku as the tool's arguments, the page draws it.</p>
        <Try phrases={["write a haiku about autumn", "a haiku about the sea"]} />
      </section>
    </FeaturePage>
  );
}

function Tool() {
  useFrontendTool({
    name: "generate_haiku",
    description: "Show a haiku: three lines in Japanese and their English translation.",
    parameters: z.object({
      topic: z.string().optional(),
      japanese: z.array(z.string()).describe("three lines in Japanese"),
      english: z.array(z.string()).describe("the three lines in English"),
    }),
    handler: async () => "the haiku is shown on the page",
    render: ({ args, status }) => <HaikuCard japanese={args.japanese} english={args.english} status={status} />,
  });
  return null;
}
