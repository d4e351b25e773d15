// A live copy of the shared state from an AI SDK stream: the server sends the whole state
// (`data-state`) at the start and at step ends, and each change in between as a transient
// RFC 6902 patch (`data-state-delta`). Feed every `onData` part to `nextState`.

import { applyPatch, type Operation } from "fast-json-patch";
import type { UIMessage } from "ai";

type DataPart = { type: string; data: unknown };

/** The state after `part`: a snapshot replaces it, a patch changes a copy, others keep it. */
export function nextState<S>(state: S, part: DataPart): S {
  if (part.type === "data-state") return part.data as S;
  if (part.type !== "data-state-delta") return state;
  return applyPatch(state, part.data as Operation[], false, false).newDocument;
}

/** The state the chat's messages hold: their last `data-state` part, else `fallback`. */
export function lastState<S>(messages: UIMessage[], fallback: S): S {
  for (const message of [...messages].reverse()) {
    const part = [...message.parts].reverse().find((p) => p.type === "data-state");
    if (part) return (part as DataPart).data as S;
  }
  return fallback;
}
