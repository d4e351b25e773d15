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

type Part = { type: string; id?: string; data?: unknown };

/**
 * The request's messages (their old state parts left out: `stripOldStateParts`) naming the
 * thread's latest version as the state the page holds: the last `data-state` part becomes
 * `state` and its `data-state-version` says `version`. The server then takes no edit of the
 * person's from the request (they went to the thread at once, as edits) and starts the run
 * from its latest version. `state` is returned too, for a chat that holds no state part yet.
 */
export function atVersion<M extends UIMessage>(messages: M[], version: number, state: unknown): { messages: M[]; state?: unknown } {
  let at = messages.length - 1;
  while (at >= 0 && !messages[at].parts.some((p) => p.type === "data-state")) at -= 1;
  if (at < 0) return { messages, state };
  const parts = (messages[at].parts as Part[]).filter((p) => p.type !== "data-state-version").map((p) =>
    p.type === "data-state" ? { ...p, data: state } : p);
  parts.push({ type: "data-state-version", id: "state-version", data: { version } });
  const out = [...messages];
  out[at] = { ...messages[at], parts: parts as M["parts"] };
  return { messages: out };
}
