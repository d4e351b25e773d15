// The thread's shared state, live (clients/live-state): every version the server commits, from
// runs, from this page and from other windows, and the person's edits sent at once, run or no
// run. Each view shows `live.state` once the thread has a version; before that (a thread whose
// first run has not started) the person's edits stay on the page and go with the first run.

import { useCallback, useEffect, useRef, useState } from "react";
import {
  LiveThread,
  diffState,
  type Json,
  type LiveView,
} from "../../../clients/live-state/index.js";
import { AGENT, normalize, type DemoState, type Edit } from "./model";
import type { Board } from "./useBoard";

export { followAgent, stripOldStateParts } from "../../../clients/live-state/index.js";

/** How long a run waits for the person's edits still on their way (then it goes anyway: an
 * edit that lands during the run is committed through it). */
const SETTLE_MS = 3000;

/** The server the page was loaded from (the demo serves the page and the API together). */
export function serverUrl(): string {
  return new URL(".", location.href).toString();
}

/** What a view is told at each change of the thread's state it shows: `own` when it is this
 * page's own edit (shown at once, nothing to highlight), `first` for the first (the thread as
 * it is, not a change). */
export type OnLiveState = (state: DemoState, how: { own: boolean; first: boolean }) => void;

export type Live = {
  thread: LiveThread<Json>;
  /** The thread's state, version and whether a run goes on (null: no version yet). */
  view: LiveView<Json> | null;
  /** Why the server refused the person's last edit (shown on the board), or null. */
  refused: string | null;
  dismiss: () => void;
  /** Follow the thread's feed from now on (once it exists: its first run started it). */
  follow: () => void;
  /** Make the person's edit an edit of the thread, at once; false when the thread has no
   * version yet and is not followed (the view keeps the edit for the first run). */
  edit: (change: Edit) => boolean;
  /** Resolves once the person's edits are committed (or after SETTLE_MS): a run started
   * right after an edit starts from it. */
  settled: () => Promise<void>;
};

/** Follow thread `threadId` (at once when `now`, else from `follow()`); `onState` is told each
 * version it shows. */
export function useLiveThread(threadId: string, now: boolean, onState: OnLiveState): Live {
  const [refused, setRefused] = useState<string | null>(null);
  const [thread] = useState(
    () =>
      new LiveThread<Json>({
        baseUrl: serverUrl(),
        agent: AGENT,
        threadId,
        onRefused: ({ error }) => setRefused(`Your change was not applied: ${error}`),
      }),
  );
  const [view, setView] = useState<LiveView<Json> | null>(null);
  const own = useRef(false);
  const shown = useRef(false);
  const following = useRef<Promise<void> | null>(null);
  const told = useRef(onState);
  told.current = onState;

  const follow = useCallback(() => {
    following.current ??= thread.start().catch(() => undefined);
  }, [thread]);

  useEffect(() => {
    const stop = thread.subscribe((next) => {
      if (next.version === null) return;
      setView(next);
      told.current(normalize(next.state), { own: own.current, first: !shown.current });
      shown.current = true;
    });
    if (now) follow();
    return () => {
      stop();
      thread.stop();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [thread]);

  const edit = useCallback(
    (change: Edit): boolean => {
      if (thread.version === null) {
        if (following.current === null) return false;
        void following.current.then(() => {
          if (thread.version !== null) apply(change);
        });
        return true;
      }
      apply(change);
      return true;
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [thread],
  );

  function apply(change: Edit): void {
    const before = thread.state;
    const ops = diffState(before, change(normalize(before)) as unknown as Json);
    if (ops.length === 0) return;
    setRefused(null);
    own.current = true;
    try {
      void thread.edit(ops);
    } catch (error) {
      setRefused(`Your change was not applied: ${(error as Error).message}`);
    } finally {
      own.current = false;
    }
  }

  const settled = useCallback(
    () => Promise.race([thread.flush(), new Promise<void>((done) => setTimeout(done, SETTLE_MS))]),
    [thread],
  );

  return { thread, view, refused, dismiss: () => setRefused(null), follow, edit, settled };
}

/** Where the state of a thread not started yet lives (the agent's): the person's edits go with
 * its first run. */
type AgentState = { setState: (state: DemoState) => void };

/** The person's edits of the board, for a view that brings its thread back through its agent
 * (`restoring` says whether it still does). An edit made while the thread comes back (typed
 * before its state arrived) is made again on the state it brings, so that state does not replace
 * it (`restore`), and becomes an edit of the thread once it is back (`restored`). */
export function useBoardEdits(live: Live, board: Board, restoring: () => boolean) {
  const early = useRef<Edit[]>([]);
  /** Show the state the thread brings back, with the edits made while it came made again. */
  const restore = (state: unknown) => board.reset(early.current.reduce((s, change) => change(s), normalize(state)));
  /** The thread is back: the edits made while it came are made on it (or, a thread not
   * started, on the agent's state). */
  const restored = (agent: AgentState) => {
    const edits = early.current;
    early.current = [];
    for (const change of edits) {
      if (live.edit(change)) continue;
      agent.setState(board.current.current);
      break;
    }
  };
  /** The person's edit: an edit of the thread; while it comes back, kept to be made again; a
   * thread not started yet, the agent's state (it goes with the first run). */
  const edit = (change: Edit, agent: AgentState | null) => {
    if (live.edit(change)) return;
    const next = change(board.current.current);
    if (restoring()) early.current.push(change);
    else agent?.setState(next);
    board.reset(next);
  };
  const forget = () => {
    early.current = [];
  };
  return { restore, restored, edit, forget };
}

/** A state event's version number (AG-UI `metadata.stateVersion`), when it has one. */
export function eventVersion(event: { metadata?: unknown }): number | null {
  const version = (event.metadata as { stateVersion?: unknown } | undefined)?.stateVersion;
  return typeof version === "number" && Number.isInteger(version) && version > 0 ? version : null;
}
