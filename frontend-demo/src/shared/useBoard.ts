// The state a view shows, what the agent last changed (highlighted), and the log of patches.

import { useCallback, useRef, useState } from "react";
import { changedIds, EMPTY, normalize, patchEntry, type DemoState, type PatchEntry } from "./model";

/** What `useBoard` gives a view. */
export type Board = ReturnType<typeof useBoard>;

export function useBoard() {
  const [state, setStateValue] = useState<DemoState>(EMPTY);
  const [hot, setHot] = useState<Set<string>>(new Set());
  const [patches, setPatches] = useState<PatchEntry[]>([]);
  const current = useRef<DemoState>(EMPTY);

  const set = (next: DemoState) => {
    current.current = next;
    setStateValue(next);
  };
  /** The agent changed the state: show it and highlight what is new or different. */
  const fromAgent = useCallback((value: unknown) => {
    const next = normalize(value);
    const changed = changedIds(current.current, next);
    if (changed.size) setHot((old) => new Set([...old, ...changed]));
    set(next);
  }, []);
  /** The whole state without a highlight: a thread loaded, the person's own edit. */
  const reset = useCallback((value: unknown) => set(normalize(value)), []);
  const log = useCallback((source: string, ops: unknown) => {
    setPatches((old) => [...old.slice(-199), patchEntry(source, ops)]);
  }, []);
  const cool = useCallback(() => setHot(new Set()), []);
  return { state, current, hot, patches, fromAgent, reset, log, cool };
}
