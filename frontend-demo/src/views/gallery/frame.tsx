// What every gallery page shares: a CopilotKit v2 provider talking straight to one of our
// agents (`agents__unsafe_dev_only`, no CopilotKit runtime), its prebuilt <CopilotChat>, and
// the page's layout (the chat beside what the feature shows).

import { useState, type ReactNode } from "react";
import { Observable } from "rxjs";
import {
  CopilotChat,
  CopilotKit,
  EventType,
  HttpAgent,
  type BaseEvent,
  type RunAgentInput,
} from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import { ErrorBanner } from "../../shared/components";

type ProviderProps = Omit<Parameters<typeof CopilotKit>[0], "children">;

/** An HttpAgent on a new thread: `connect` (which CopilotKit calls first, after emptying the
 * agent) only gives the page's starting state back. */
class NewThreadAgent extends HttpAgent {
  constructor(url: string, threadId: string, private start: Record<string, unknown> | undefined) {
    super({ url, threadId, initialState: start });
  }

  protected connect(input: RunAgentInput): Observable<BaseEvent> {
    return new Observable<BaseEvent>((out) => {
      const { threadId, runId } = input;
      out.next({ type: EventType.RUN_STARTED, threadId, runId } as BaseEvent);
      if (this.start) out.next({ type: EventType.STATE_SNAPSHOT, snapshot: this.start } as BaseEvent);
      out.next({ type: EventType.RUN_FINISHED, threadId, runId } as BaseEvent);
      out.complete();
    });
  }
}

/** One feature's page: CopilotKit with the agent `agentId`, the chat on the left, `children`
 * (what the feature shows) on the right. */
export function FeaturePage({
  agentId,
  hint,
  state,
  provider,
  children,
}: {
  agentId: string;
  hint: string;
  state?: Record<string, unknown>;
  provider?: Partial<ProviderProps>;
  children: ReactNode;
}) {
  const [error, setError] = useState<string | null>(null);
  const [threadId] = useState(() => crypto.randomUUID());
  const [agent] = useState(
    () => new NewThreadAgent(new URL(`agents/${agentId}/ag-ui`, location.href).toString(), threadId, state),
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
          <CopilotChat agentId={agentId} threadId={threadId} labels={{ chatInputPlaceholder: hint }} />
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
