// Human in the loop, both ways: `useHumanInTheLoop` (the page's `select_steps`, which the
// person answers; the run goes on with the answer) and `useInterrupt` (the server's approval
// of `book_flight`, which resumes the same run).

import { useState } from "react";
import { z } from "zod";
import { useHumanInTheLoop, useInterrupt } from "@copilotkit/react-core/v2";
import { FeaturePage, Try } from "./frame";

const AGENT = "human_in_the_loop";

type Step = { description: string; status: "enabled" | "disabled" };

function StepPicker({ steps, respond, done }: { steps: Step[]; respond?: (answer: unknown) => Promise<void>; done?: string }) {
  const [picked, setPicked] = useState<Step[]>(steps);
  const current = picked.length === steps.length ? picked : steps;
  const toggle = (i: number) =>
    setPicked(current.map((s, j) => (j === i ? { ...s, status: s.status === "enabled" ? "disabled" : "enabled" } : s)));
  return (
    <div className="picker" data-testid="step-picker" data-answered={done ? "yes" : "no"}>
      <strong>Which steps should the agent take?</strong>
      <ul>
        {current.map((s, i) => (
          <li key={i} className="row">
            <input type="checkbox" aria-label={`step: ${s.description}`} checked={s.status === "enabled"} disabled={!respond} onChange={() => toggle(i)} />
            <span className={s.status === "enabled" ? "" : "skipped"}>{s.description}</span>
          </li>
        ))}
      </ul>
      {respond ? (
        <div className="actions">
          <button className="primary" onClick={() => respond({ accepted: true, steps: current })}>Confirm</button>
          <button onClick={() => respond({ accepted: false })}>Reject</button>
        </div>
      ) : done ? (
        <div className="muted">answered</div>
      ) : null}
    </div>
  );
}

export default function HumanInTheLoop() {
  return (
    <FeaturePage agentId={AGENT} hint="Ask the agent to plan or book something…">
      <Hooks />
      <section className="card">
        <h2>Human in the loop</h2>
        <p>
          <strong>The page asks you</strong> (<code>useHumanInTheLoop</code>): the agent proposes steps with the page's tool <code>select_steps</code>; you pick, and the run goes on with your answer.
        </p>
        <p>
          <strong>The server asks you</strong> (<code>useInterrupt</code>): <code>book_flight</code> needs your approval; the run stops with an interrupt and your answer resumes it.
        </p>
        <Try phrases={["plan a trip to Mars", "book a flight to Paris"]} />
      </section>
    </FeaturePage>
  );
}

function Hooks() {
  useHumanInTheLoop({
    name: "select_steps",
    description: "Ask the person which of the proposed steps to carry out. Each step: a description and status 'enabled'.",
    parameters: z.object({
      steps: z.array(z.object({ description: z.string(), status: z.enum(["enabled", "disabled"]) })),
    }),
    render: ({ args, status, respond, result }) => (
      <StepPicker steps={(args.steps ?? []) as Step[]} respond={status === "executing" ? respond : undefined} done={status === "complete" ? result : undefined} />
    ),
  });
  useInterrupt({
    agentId: AGENT,
    renderInChat: true,
    render: ({ interrupt, resolve }) => {
      const meta = (interrupt?.metadata ?? {}) as { tool?: string; arguments?: Record<string, unknown> };
      return (
        <div className="approval-card" role="dialog" aria-label="Approve the booking" data-testid="approval">
          <strong>The agent wants to run {meta.tool ?? "a tool"}</strong>
          <p>{interrupt?.message ?? "Approve?"}</p>
          <pre>{JSON.stringify(meta.arguments ?? {})}</pre>
          <div className="actions">
            <button className="primary" onClick={() => resolve({ approved: true })}>Approve</button>
            <button onClick={() => resolve({ approved: false })}>Deny</button>
          </div>
        </div>
      );
    },
  });
  return null;
}
