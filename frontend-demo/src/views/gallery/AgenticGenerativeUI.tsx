// Agentic generative UI: `run_task` shows its steps while it works (`ctx.progress` -> AG-UI
// ACTIVITY_SNAPSHOT / ACTIVITY_DELTA). The chat draws the activity with the renderer given to
// <CopilotKit renderActivityMessages>, and the side panel draws the latest one with
// `useRenderActivityMessage`.

import { z } from "zod";
import { CopilotChatConfigurationProvider, useAgent, useRenderActivityMessage } from "@copilotkit/react-core/v2";
import { FeaturePage, Try } from "./frame";

const AGENT = "agentic_generative_ui";
const KIND = "task_progress";

type Progress = { task: string; steps: { description: string; status: string }[] };

function TaskSteps({ content }: { content: Progress }) {
  const done = content.steps.filter((s) => s.status === "done").length;
  return (
    <div className="task" data-testid="task-steps" data-done={done} data-total={content.steps.length}>
      <strong>
        {content.task}: {done} of {content.steps.length} done
      </strong>
      <ol>
        {content.steps.map((s, i) => (
          <li key={i} className={`step ${s.status.replace(" ", "-")}`} data-status={s.status}>
            <span className="step-mark">{s.status === "done" ? "✓" : s.status === "pending" ? "○" : "◐"}</span> {s.description}
          </li>
        ))}
      </ol>
    </div>
  );
}

const renderer = {
  activityType: KIND,
  content: z.object({
    task: z.string(),
    steps: z.array(z.object({ description: z.string(), status: z.string() })),
  }),
  render: ({ content }: { content: Progress }) => <TaskSteps content={content} />,
};
// CopilotKit wants the same array on every render.
const PROVIDER = { renderActivityMessages: [renderer] };

export default function AgenticGenerativeUI() {
  return (
    <FeaturePage agentId={AGENT} hint="Ask the agent to make something…" provider={PROVIDER}>
      <section className="card" data-testid="task-panel">
        <h2>Agentic generative UI</h2>
        <p>The agent's tool <code>run_task</code> reports each step as it goes: the steps appear, then complete, live.</p>
        <Try phrases={["make pancakes", "make tea"]} />
        {/* the activity renderer reads its agent from a chat configuration: outside the chat,
            give it ours, or it looks up the "default" agent and warns on every render */}
        <CopilotChatConfigurationProvider agentId={AGENT}>
          <LatestTask />
        </CopilotChatConfigurationProvider>
      </section>
    </FeaturePage>
  );
}

function LatestTask() {
  const { agent } = useAgent({ agentId: AGENT });
  const { renderActivityMessage } = useRenderActivityMessage();
  const latest = [...agent.messages].reverse().find((m) => m.role === "activity");
  return latest ? renderActivityMessage(latest) : <p className="empty">No task yet.</p>;
}
