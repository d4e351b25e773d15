// Types of @pyox-agents/live-state (hand-written; the code is index.js).

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** An RFC 6902 operation. */
export type Operation =
  | { op: "add"; path: string; value: Json }
  | { op: "remove"; path: string }
  | { op: "replace"; path: string; value: Json }
  | { op: "move"; from: string; path: string }
  | { op: "copy"; from: string; path: string }
  | { op: "test"; path: string; value: Json };

/** An operation that cannot be applied: `path` names where. */
export declare class PatchError extends Error {
  readonly name: "PatchError";
  /** The operation (as given). */
  readonly op: unknown;
  /** The path that does not exist (or failed its `test`). */
  readonly path: unknown;
}

/**
 * `state` with `ops` applied, as a new value (`state` is left as it is: the containers on each
 * op's path are copied, the rest shared).
 * @throws PatchError naming the op's path when an op does not apply.
 */
export declare function applyOps<T = Json>(state: T, ops: readonly Operation[]): T;

/** The ops that turn `before` into `after` (`applyOps(before, diffState(before, after))`
 * equals `after`); an array item changed in place (same `id`, `key` or `_id`, or most of its
 * values) is diffed in place, the others removed and added. */
export declare function diffState(before: Json, after: Json): Operation[];

/**
 * The ops of an edit made on state `madeOn`, moved onto the state that `through` (the changes
 * others made meanwhile, e.g. `diffState(madeOn, latest)`) turns it into: indices shifted past
 * the items added and removed before them; where both wrote one place, the edit's write
 * stays. Null when a place the edit reads or writes is gone.
 */
export declare function rebaseOps(ops: readonly Operation[], through: readonly Operation[], madeOn?: Json): Operation[] | null;

/** Whether two JSON values are the same JSON. */
export declare function deepEqual(a: unknown, b: unknown): boolean;

/** What a listener of `LiveThread.subscribe` is told at each change. */
export interface LiveView<S = Json> {
  /** The state shown: the server's latest version with this page's pending edits on top. */
  state: S;
  /** The number of the server's latest version this page has (null: the thread has none yet). */
  version: number | null;
  /** Whether a run goes on the thread. */
  running: boolean;
  /** How many of this page's edits the server does not show yet. */
  pending: number;
}

/** An edit the server committed. */
export interface Committed {
  ok: true;
  /** The version it made (the latest, when it changed nothing). */
  version: number;
  /** Its ops as the server applied them (to the version before `version`). */
  delta: Operation[];
  /** The version it was sent on. */
  base: number;
  /** Its ops as sent (moved onto `base` when made on this page's own pending edits). */
  ops: Operation[];
}

/** An edit that was not applied. */
export interface Refusal<S = Json> {
  ok?: false;
  /** Why, in words for the person (the server's, when it refused). */
  error: string;
  /** The HTTP status: 409 (the place it edits is gone, or its version is not kept), 422 or
   * 413 (a bad edit), 0 (it could not be sent: the thread shows whether it was taken). */
  status: number;
  /** The field the server named (422, 413). */
  field?: string;
  /** The thread's version and state now (the server's, with a 409). */
  version: number | null;
  state: S;
  /** The edit's ops. */
  ops: Operation[];
  /** The version it was sent on (made on). */
  base: number | null;
}

export type HeadersLike = HeadersInit | (() => HeadersInit | Promise<HeadersInit>);

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface LiveThreadOptions<S = Json> {
  /** The server's URL (the app of `create_app`), e.g. "https://example.com/api". */
  baseUrl: string;
  /** The agent's name (`create_app({name: agent})`): edits go to /agents/{agent}/threads/... */
  agent: string;
  threadId: string;
  /** Headers of every request (e.g. Authorization), or a function giving them. */
  headers?: HeadersLike;
  /** The fetch to use (default: the global one). */
  fetch?: FetchLike;
  /** Told when the server refuses an edit of this page's (so that the page can say so); its
   * `state` and `version` are already shown. */
  onRefused?: (refusal: Refusal<S>) => void;
  /** Told when the feed fails: network errors, 5xx and 404 (a thread not started yet: it tries
   * again), 401/403 (it stops). */
  onError?: (error: Error & { status?: number }) => void;
}

/**
 * One thread's shared state, live: `GET /threads/{id}/events` followed with fetch (reconnecting
 * with Last-Event-ID after a cut), this page's edits applied at once and sent with
 * `PATCH /agents/{agent}/threads/{id}/state`, one at a time, on the version they were made on.
 */
export declare class LiveThread<S = Json> {
  constructor(options: LiveThreadOptions<S>);
  readonly baseUrl: string;
  readonly agent: string;
  readonly threadId: string;
  /** The state shown: the server's latest version with this page's pending edits on top. */
  readonly state: S;
  /** The server's latest version this page has: its number and state. */
  readonly server: { version: number | null; state: S };
  /** `server.version`. */
  readonly version: number | null;
  /** Whether a run goes on the thread. */
  readonly running: boolean;
  /** Whether the feed is open now. */
  readonly connected: boolean;
  /** How many of this page's edits the server does not show yet. */
  readonly pending: number;
  /** How many times the feed started again from a fresh snapshot. */
  readonly resyncs: number;
  onRefused?: (refusal: Refusal<S>) => void;
  onError?: (error: Error & { status?: number }) => void;
  /** Follow the thread; resolves once its first snapshot is in, rejects when the server
   * refuses the thread (401, 403); a thread not started yet (404) is waited for. */
  start(): Promise<void>;
  /** Stop following the thread (edits made already are still sent). */
  stop(): void;
  /** Call `listener` at every change; gives the function that stops it. */
  subscribe(listener: (view: LiveView<S>) => void): () => void;
  /**
   * Apply `ops` to `state` at once and send them. Resolves when the server answered: committed,
   * or refused (then `onRefused` is told too, and `state` shows the server's).
   * @throws PatchError when `ops` do not apply to `state`; Error before the thread has a version.
   */
  edit(ops: readonly Operation[]): Promise<Committed | (Refusal<S> & { ok: false })>;
  /** Resolves once no edit of this page's is pending (each answered, its version shown). */
  flush(): Promise<void>;
}

/**
 * What `followAgent` needs of an `@ag-ui/client` agent (`AbstractAgent`, `HttpAgent`; 0.0.x
 * and 1.x): its state, `setState`, `subscribe`, `use` (a middleware) and `isRunning`.
 */
export interface FollowableAgent {
  state: any;
  isRunning: boolean;
  setState(state: any): void;
  subscribe(subscriber: {
    onStateSnapshotEvent?(params: { event: { metadata?: Record<string, unknown> } }): unknown;
    onStateDeltaEvent?(params: { event: { metadata?: Record<string, unknown> } }): unknown;
    onStateChanged?(params: { state: any; input?: unknown }): unknown;
    onRunFinalized?(params: any): unknown;
  }): { unsubscribe(): void };
  use(...middlewares: Array<(input: any, next: any) => any>): unknown;
}

/**
 * Keep an `@ag-ui/client` agent in step with `thread`: `agent.state` is the thread's (between
 * runs; a run's own stream tells its versions), a page's `agent.setState(...)` becomes an edit
 * of the thread (`thread.edit` of the difference), and every run sends the thread's latest
 * state with its number in `forwardedProps.stateVersion` (the person's edits go by the
 * thread's own requests, never twice). Gives the function that stops it.
 */
export declare function followAgent(thread: LiveThread<any>, agent: FollowableAgent): () => void;

/** An AI SDK UI message, as far as `stripOldStateParts` reads it. */
export interface MessageWithParts {
  parts?: ReadonlyArray<{ type: string }>;
}

/**
 * `messages` with the `data-state` and `data-state-version` parts of all but the last message
 * that has one left out (the server reads only the last of each), for `DefaultChatTransport`'s
 * `prepareSendMessagesRequest`. The messages given are left as they are.
 */
export declare function stripOldStateParts<M extends MessageWithParts>(messages: readonly M[]): M[];

/** What `connectingAgent` takes of an AG-UI client (`@ag-ui/client`, or CopilotKit's copy). */
export interface ConnectParts {
  runHttpRequest(request: () => Promise<Response>): any;
  transformHttpEventStream(source: any): any;
}

/**
 * `HttpAgent` extended with `connect(input)`: POST the thread's RunAgentInput to
 * `<run url>/connect` and read the answer as the thread's events (its messages, its state, the
 * tail of a run still going), which `agent.connectAgent()` (CopilotKit, after a reload) calls.
 * Instances have `connectUrl()`, the URL it posts to.
 */
export declare function connectingAgent<A extends new (...args: any[]) => any>(
  HttpAgent: A, client: ConnectParts,
): new (...args: ConstructorParameters<A>) => InstanceType<A> & { connectUrl(): string };
