// The thread's shared state, live: every version the server commits (from the agent's runs,
// from this window and from any other) arrives by the thread's feed, and the person's edits go
// to the server at once, run or no run (`LiveThread` of the live-state client).

import { useCallback, useEffect, useRef, useState } from "react";
import { LiveThread, type LiveView } from "./live-state/index.js";
import { AGENT, SERVER, markStarted } from "./thread";
import type { BoardState } from "./Board";

export type Live = {
  thread: LiveThread<BoardState>;
  /** The thread's latest state, its version and whether a run goes on; null until it has one. */
  view: LiveView<BoardState> | null;
  /** Why the server refused the person's last edit, or null. */
  refused: string | null;
  dismiss: () => void;
  /** Follow the thread from now on: call it once the server has it (its first run started). */
  follow: () => void;
};

/** Follow thread `threadId`, at once when it has `started`, else from `follow()`. */
export function useLive(threadId: string, started: boolean): Live {
  const [refused, setRefused] = useState<string | null>(null);
  const [thread] = useState(
    () =>
      new LiveThread<BoardState>({
        baseUrl: SERVER,
        agent: AGENT,
        threadId,
        onRefused: ({ error }) => setRefused(`Your change was not applied: ${error}`),
        onError: (error) => setRefused(`The thread's feed failed: ${error.message}`),
      }),
  );
  const [view, setView] = useState<LiveView<BoardState> | null>(null);
  const following = useRef(false);

  const follow = useCallback(() => {
    if (following.current) return;
    following.current = true;
    markStarted(threadId);
    thread.start().catch(() => undefined); // told by onError
  }, [thread, threadId]);

  useEffect(() => {
    const stop = thread.subscribe((next) => {
      if (next.version !== null) setView(next);
    });
    if (started) follow();
    return () => {
      stop();
      thread.stop();
      following.current = false;
    };
  }, [thread, started, follow]);

  return { thread, view, refused, dismiss: () => setRefused(null), follow };
}

/** A state event's version (AG-UI `metadata.stateVersion`), or null. */
export function versionOf(event: { metadata?: unknown }): number | null {
  const version = (event.metadata as { stateVersion?: unknown } | undefined)?.stateVersion;
  return typeof version === "number" ? version : null;
}
