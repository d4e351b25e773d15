// A thread's history (GET /threads/{id}/history): its runs, each with the message it answered,
// how it ended and the shared state's version after it, and a way back to any of them: Fork
// (a new thread as this one was right after the run; the page opens it) or Rewind (this thread
// goes back there; what came after stays in the history, as a branch, and can be rewound to).

import { useCallback, useEffect, useState } from "react";
import { forkThread, loadHistory, onThreadsChanged, rewindThread, type HistoryRun } from "./threads";

type Run = HistoryRun;

export type HistoryProps = {
  view: string;
  threadId: string;
  title: string;
  /** Whether the server has the thread (false: a new one, nothing asked of the server). */
  known: boolean;
  open: boolean;
  onOpen: (open: boolean) => void;
  onForked: (id: string, title: string) => void;
  onRewound: (note: string) => void;
  /** What the last rewind did, shown once the thread came back. */
  note: string | null;
};

export function HistoryPanel({ view, threadId, title, known, open, onOpen, onForked, onRewound, note }: HistoryProps) {
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(() => {
    if (!known) return;
    loadHistory(threadId).then(setRuns, (e: Error) => setError(e.message));
  }, [threadId, known]);
  useEffect(() => {
    if (open) load();
  }, [open, load]);
  useEffect(() => onThreadsChanged(() => open && load()), [open, load]);

  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const fork = (run: Run) =>
    act(async () => {
      const forked = await forkThread(view, threadId, run.run_id, title);
      onForked(forked.id, forked.title);
    });
  const rewind = (run: Run, n: number) =>
    act(async () => {
      await rewindThread(threadId, run.run_id);
      onRewound(`Rewound to run ${n}: the conversation and the state as they were right after it. What came after is kept as a branch.`);
    });

  return (
    <details className="card history-panel" data-testid="history" open={open} onToggle={(e) => onOpen(e.currentTarget.open)}>
      <summary>History: fork or rewind{runs ? ` (${runs.length} runs)` : ""}</summary>
      {note && <p className="history-note" role="status" data-testid="history-note">{note}</p>}
      {error && <p className="history-error" role="alert" data-testid="history-error">{error}</p>}
      {!known || runs?.length === 0 ? (
        <p className="muted">No runs yet: send a message.</p>
      ) : runs === null ? (
        <p className="muted">Loading…</p>
      ) : (
        <ol className="history-runs">
          {runs.map((run, i) => (
            <li key={run.run_id} className={`history-run ${run.current ? "" : "branch"}`} data-testid="history-run" data-run={run.run_id}>
              <span>
                <span className="history-asked">{run.asked ? `“${run.asked}”` : "(no message)"}</span>
                <span className="history-meta">
                  {" "}{run.status ?? "running"}{run.version !== null ? ` · state v${run.version}` : ""}{run.current ? "" : " · branch"}
                </span>
              </span>
              <span className="history-actions">
                <button disabled={busy || run.status === "paused" || run.status === null} onClick={() => fork(run)}
                        aria-label={`Fork at run ${i + 1}`} title="A new thread, as this one was right after this run">Fork</button>
                <button disabled={busy || run.status === "paused" || run.status === null} onClick={() => rewind(run, i + 1)}
                        aria-label={`Rewind to run ${i + 1}`} title="This thread, back to right after this run">Rewind</button>
              </span>
            </li>
          ))}
        </ol>
      )}
    </details>
  );
}
