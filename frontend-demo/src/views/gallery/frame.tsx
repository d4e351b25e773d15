// What every gallery page shares: a CopilotKit v2 provider talking straight to one of our
// agents (`agents__unsafe_dev_only`, no CopilotKit runtime), its prebuilt <CopilotChat>, and
// the page's layout (the chat beside what the feature shows). Each page keeps its thread: a
// `ConnectingAgent` brings its messages and state back after a reload; "New thread" starts over.

import { useState, type ReactNode } from "react";
import { CopilotChat, CopilotKit } from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import { ErrorBanner } from "../../shared/components";
import { NAMED_BUTTONS } from "../../shared/chatInput";
import { ConnectingAgent } from "../../shared/ConnectingAgent";

type ProviderProps = Omit<Parameters<typeof CopilotKit>[0], "children">;

const threadKey = (agentId: string) => `pyox-gallery-thread:${agentId}`;

function keptThread(agentId: string): string {
  const kept = localStorage.getItem(threadKey(agentId));
  if (kept) return kept;
  const id = crypto.randomUUID();
  localStorage.setItem(threadKey(agentId), id);
  return id;
}

/** One feature's page on its kept thread; "New thread" starts another. */
export function FeaturePage(props: FeaturePageProps) {
  const [threadId, setThreadId] = useState(() => keptThread(props.agentId));
  const restart = () => {
    const id = crypto.randomUUID();
    localStorage.setItem(threadKey(props.agentId), id);
    setThreadId(id);
  };
  return <FeatureThread key={threadId} threadId={threadId} onNewThread={restart} {...props} />;
}

type FeaturePageProps = {
  agentId: string;
  hint: string;
  state?: Record<string, unknown>;
  provider?: Partial<ProviderProps>;
  children: ReactNode;
};

/** CopilotKit with the agent `agentId` on `threadId`: the chat on the left, `children` (what
 * the feature shows) on the right. */
function FeatureThread({
  agentId,
  hint,
  state,
  provider,
  children,
  threadId,
  onNewThread,
}: FeaturePageProps & { threadId: string; onNewThread: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [agent] = useState(
    () => new ConnectingAgent({ url: new URL(`agents/${agentId}/ag-ui`, location.href).toString(), threadId, initialState: state }),
  );
  return (
    <CopilotKit
      {...provider}
      agents__unsafe_dev_only={{ [agentId]: agent }}
      agentId={agentId}
      threadId={threadId}
      enableInspector={false}
      showDevConsole={false}
      onError={(e) => setError(`CopilotKit: ${e.error?.message ?? String(e)}`)}
    >
      <ErrorBanner error={error} onClose={() => setError(null)} />
      <div className="layout">
        <section className="card chat copilot" data-testid="chat">
          <button className="new-thread" onClick={onNewThread} data-testid="new-thread">+ New thread</button>
          <CopilotChat agentId={agentId} threadId={threadId} labels={{ chatInputPlaceholder: hint }} input={NAMED_BUTTONS} />
        </section>
        <div className="side">{children}</div>
      </div>
    </CopilotKit>
  );
}

/** The phrases the offline demo model knows on this page. */
export function Try({ phrases }: { phrases: string[] }) {
  return (
    <p className="muted" data-testid="try">
      Try: {phrases.map((p, i) => (
        <span key={p}>
          {i > 0 && ", "}“{p}”
        </span>
      ))}
    </p>
  );
}
