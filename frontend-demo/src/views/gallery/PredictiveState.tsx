// Predictive state updates: `write_document` is declared with
// `predict_state={"document": "text"}`, so the server sends CUSTOM PredictState before the
// tool's call and CopilotKit writes the streaming `text` argument into `agent.state.document`;
// the server's STATE_DELTA commits it when the tool has run. Then the page's `confirm_changes`
// (`useHumanInTheLoop`) asks the person to keep the change or undo it.

import { useAgent, useHumanInTheLoop } from "@copilotkit/react-core/v2";
import { FeaturePage, Try } from "./frame";

const AGENT = "predictive_state_updates";
const START = { document: "" };

export default function PredictiveState() {
  return (
    <FeaturePage agentId={AGENT} hint="Ask the agent to write something…" state={START}>
      <Confirm />
      <Document />
    </FeaturePage>
  );
}

function Confirm() {
  useHumanInTheLoop({
    name: "confirm_changes",
    description: "Ask the person whether to keep the change just made to the document.",
    render: ({ status, respond, result }) => (
      <div className="approval-card" data-testid="confirm-changes" data-status={status}>
        <strong>Keep the change to the document?</strong>
        {status === "executing" ? (
          <div className="actions">
            <button className="primary" onClick={() => respond({ accepted: true })}>Keep</button>
            <button onClick={() => respond({ accepted: false })}>Undo</button>
          </div>
        ) : (
          <div className="muted">{status === "complete" ? (String(result).includes("true") ? "kept" : "undone") : "…"}</div>
        )}
      </div>
    ),
  });
  return null;
}

function Document() {
  const { agent } = useAgent({ agentId: AGENT });
  const document = typeof agent.state?.document === "string" ? (agent.state.document as string) : "";
  return (
    <section className="card" data-testid="document-card">
      <h2>Predictive state updates</h2>
      <p>The document is the shared state. While the model writes the tool's argument, the page already shows it; the run commits it when the tool has run, and you keep the change or undo it.</p>
      <Try phrases={["write a story about a lighthouse", "write a poem about the sea"]} />
      <div className="doc-status" data-testid="document-status">
        {agent.isRunning ? "the agent is writing…" : document ? "saved" : "empty"}
      </div>
      <div className="document" data-testid="document">
        {document || <span className="empty">The document is empty.</span>}
      </div>
    </section>
  );
}
