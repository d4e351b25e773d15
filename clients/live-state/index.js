// @pyox-agents/live-state: a thread's shared state, live in every open tab.
//
// A pyox-agents server numbers every version of a thread's shared state, commits a person's
// edit at once (PATCH /agents/{name}/threads/{id}/state, made on a version it names) and tells
// every follower of the thread each new version (GET /threads/{id}/events, server-sent events).
// This module is the page's side of that: `LiveThread` follows a thread and edits it
// optimistically, `followAgent` keeps an @ag-ui/client agent in step with it, and
// `stripOldStateParts` keeps an AI SDK request from carrying every past state.
//
// No dependencies: it needs `fetch`, `ReadableStream`, `TextDecoder` and `AbortController`
// (every browser, Node >= 18).

/** An RFC 6902 operation that cannot be applied (`op` and `path` name it). */
export class PatchError extends Error {
  constructor(op, path, reason) {
    super(`cannot ${op?.op ?? "apply"} ${JSON.stringify(path)}: ${reason}`);
    this.name = "PatchError";
    this.op = op;
    this.path = path;
  }
}

// -- RFC 6902 ---------------------------------------------------------------------------------

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const clone = (v) => (v === null || typeof v !== "object" ? v : structuredClone(v));

/** The reference tokens of a JSON pointer (RFC 6901). */
function tokens(op, path) {
  if (typeof path !== "string") throw new PatchError(op, path, "the path is not a string");
  if (path === "") return [];
  if (path[0] !== "/") throw new PatchError(op, path, "a path starts with \"/\"");
  return path.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The index `token` names in `array` (`end`: "-" and `length` allowed, for an add). */
function indexOf(op, path, array, token, end) {
  if (end && token === "-") return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) {
    throw new PatchError(op, path, `${JSON.stringify(token)} is not an array index`);
  }
  const at = Number(token);
  if (at > array.length || (!end && at === array.length)) {
    throw new PatchError(op, path, `index ${at} is out of range (the array has ${array.length} items)`);
  }
  return at;
}

/** The value at `path` in `doc`; throws when there is none. */
function valueAt(op, path, doc) {
  let node = doc;
  for (const token of tokens(op, path)) {
    if (Array.isArray(node)) node = node[indexOf(op, path, node, token, false)];
    else if (isObject(node) && Object.prototype.hasOwnProperty.call(node, token)) node = node[token];
    else throw new PatchError(op, path, "the path does not exist");
  }
  return node;
}

/** `doc` with `change(container, token)` done at `path`'s parent, every container on the way
 * copied (the others are shared with `doc`). */
function changedAt(op, path, doc, change) {
  const parts = tokens(op, path);
  if (parts.length === 0) return change(null, null);
  const walk = (node, depth) => {
    const token = parts[depth];
    if (!Array.isArray(node) && !isObject(node)) {
      throw new PatchError(op, path, "the path does not exist");
    }
    const copy = Array.isArray(node) ? node.slice() : { ...node };
    if (depth === parts.length - 1) {
      change(copy, token);
      return copy;
    }
    if (Array.isArray(copy)) {
      const at = indexOf(op, path, copy, token, false);
      copy[at] = walk(copy[at], depth + 1);
    } else {
      if (!Object.prototype.hasOwnProperty.call(copy, token)) {
        throw new PatchError(op, path, "the path does not exist");
      }
      copy[token] = walk(copy[token], depth + 1);
    }
    return copy;
  };
  return walk(doc, 0);
}

function add(op, path, doc, value) {
  return changedAt(op, path, doc, (container, token) => {
    if (container === null) return value; // the whole document
    if (Array.isArray(container)) container.splice(indexOf(op, path, container, token, true), 0, value);
    else container[token] = value;
    return container;
  });
}

function remove(op, path, doc) {
  if (path === "") throw new PatchError(op, path, "the whole document cannot be removed");
  return changedAt(op, path, doc, (container, token) => {
    if (Array.isArray(container)) container.splice(indexOf(op, path, container, token, false), 1);
    else if (Object.prototype.hasOwnProperty.call(container, token)) delete container[token];
    else throw new PatchError(op, path, "the path does not exist");
    return container;
  });
}

export function deepEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length &&
      keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

function applyOp(doc, op) {
  if (!isObject(op) || typeof op.op !== "string") {
    throw new PatchError(op, op?.path, "an operation is an object {op, path, ...}");
  }
  const { path } = op;
  const needsValue = op.op === "add" || op.op === "replace" || op.op === "test";
  if (needsValue && !("value" in op)) throw new PatchError(op, path, "the operation has no value");
  switch (op.op) {
    case "add":
      return add(op, path, doc, clone(op.value));
    case "remove":
      valueAt(op, path, doc);
      return remove(op, path, doc);
    case "replace":
      valueAt(op, path, doc);
      return path === "" ? clone(op.value) : add(op, path, remove(op, path, doc), clone(op.value));
    case "move": {
      if (op.from === path) return doc;
      if (typeof path === "string" && typeof op.from === "string" && path.startsWith(`${op.from}/`)) {
        throw new PatchError(op, path, `a value cannot move into itself (from ${JSON.stringify(op.from)})`);
      }
      const value = valueAt(op, op.from, doc);
      return add(op, path, remove(op, op.from, doc), value);
    }
    case "copy":
      return add(op, path, doc, clone(valueAt(op, op.from, doc)));
    case "test":
      if (!deepEqual(valueAt(op, path, doc), op.value)) {
        throw new PatchError(op, path, `the value is not ${JSON.stringify(op.value)}`);
      }
      return doc;
    default:
      throw new PatchError(op, path, `unknown operation ${JSON.stringify(op.op)}`);
  }
}

/**
 * `state` with the RFC 6902 `ops` applied, as a new value: `state` is left as it is (the
 * containers on each op's path are copied, the rest shared). Throws a `PatchError` naming the
 * op's path when an op does not apply (a path that does not exist, a failed `test`).
 */
export function applyOps(state, ops) {
  if (!Array.isArray(ops)) throw new TypeError("ops must be an array of RFC 6902 operations");
  let doc = state;
  for (const op of ops) doc = applyOp(doc, op);
  return doc;
}

const pointer = (path, key) => `${path}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
const LCS_CELLS = 250_000; // past this, an array's middle is compared item by item

/**
 * The RFC 6902 ops that turn `before` into `after`: objects key by key; arrays by the items
 * they keep (a longest common subsequence), the others removed and added, an item changed in
 * place diffed in place. `applyOps(before, diffState(before, after))` equals `after`.
 */
export function diffState(before, after, path = "") {
  if (deepEqual(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const ops = [];
    for (const key of Object.keys(before)) {
      if (!Object.prototype.hasOwnProperty.call(after, key)) ops.push({ op: "remove", path: pointer(path, key) });
    }
    for (const key of Object.keys(after)) {
      if (!Object.prototype.hasOwnProperty.call(before, key)) {
        ops.push({ op: "add", path: pointer(path, key), value: clone(after[key]) });
      } else {
        ops.push(...diffState(before[key], after[key], pointer(path, key)));
      }
    }
    return ops;
  }
  if (Array.isArray(before) && Array.isArray(after)) return diffArrays(before, after, path);
  return [{ op: "replace", path, value: clone(after) }];
}

function diffArrays(before, after, path) {
  let head = 0;
  while (head < before.length && head < after.length && deepEqual(before[head], after[head])) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head &&
         deepEqual(before[before.length - 1 - tail], after[after.length - 1 - tail])) tail++;
  const a = before.slice(head, before.length - tail);
  const b = after.slice(head, after.length - tail);
  // The steps from a to b: "=" (kept), "-" (a's item removed), "+" (b's item added).
  const steps = [];
  if (a.length * b.length <= LCS_CELLS) {
    const width = b.length + 1;
    const table = new Uint32Array((a.length + 1) * width);
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        table[i * width + j] = deepEqual(a[i], b[j]) ? table[(i + 1) * width + j + 1] + 1
          : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && deepEqual(a[i], b[j])) {
        steps.push(["=", i++, j++]);
      } else if (j < b.length && (i === a.length || table[i * width + j + 1] >= table[(i + 1) * width + j])) {
        steps.push(["+", i, j++]);
      } else {
        steps.push(["-", i++, j]);
      }
    }
  } else {
    for (let i = 0; i < a.length; i++) steps.push(["-", i, 0]);
    for (let j = 0; j < b.length; j++) steps.push(["+", a.length, j]);
  }
  const ops = [];
  let at = head; // the index in the array as the ops so far left it
  for (let k = 0; k < steps.length;) {
    if (steps[k][0] === "=") {
      at++;
      k++;
      continue;
    }
    const gone = [];
    const come = [];
    for (; k < steps.length && steps[k][0] !== "="; k++) (steps[k][0] === "-" ? gone : come).push(steps[k]);
    // An item changed in place is diffed in place: each removed item goes with the next added
    // one that is the same item (`sameItem`), in order; the others are removed and added.
    const pair = new Map(); // come index -> gone index
    let from = 0;
    const paired = new Set();
    for (let g = 0; g < gone.length; g++) {
      for (let c = from; c < come.length; c++) {
        if (sameItem(a[gone[g][1]], b[come[c][2]])) {
          pair.set(c, g);
          paired.add(g);
          from = c + 1;
          break;
        }
      }
    }
    for (let g = gone.length - 1; g >= 0; g--) {
      if (!paired.has(g)) ops.push({ op: "remove", path: pointer(path, at + g) });
    }
    for (let c = 0; c < come.length; c++) {
      if (pair.has(c)) ops.push(...diffState(a[gone[pair.get(c)][1]], b[come[c][2]], pointer(path, at)));
      else ops.push({ op: "add", path: pointer(path, at), value: clone(b[come[c][2]]) });
      at++;
    }
  }
  return ops;
}

/** Whether two array items are one item changed (diffed in place rather than removed and
 * added): objects with the same `id` (or `key`), or else with at least half their values
 * the same. */
function sameItem(x, y) {
  if (!isObject(x) || !isObject(y)) return false;
  for (const key of ["id", "key", "_id"]) {
    if (key in x || key in y) return deepEqual(x[key], y[key]);
  }
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  let same = 0;
  for (const key of keys) if (key in x && key in y && deepEqual(x[key], y[key])) same++;
  return keys.size > 0 && same * 2 >= keys.size;
}

// -- rebasing an edit -------------------------------------------------------------------------

const INDEX = /^(0|[1-9][0-9]*)$/;
const CONFLICT = Symbol("conflict");

/** Whether `prefix` (tokens) starts `path` (tokens). */
const startsWith = (path, prefix) => prefix.length <= path.length && prefix.every((t, i) => path[i] === t);

/**
 * `path` (tokens) of an op (`adds`: an add, which names a place between items) moved past
 * `other` (add, remove or replace, made on the same state): the new tokens, or CONFLICT when
 * `other` took away or replaced the place (or what holds it). `first`: where both insert at
 * one index, `other`'s item goes first (mine after it).
 */
function pastPath(path, adds, other, first, inArray) {
  const at = tokens(other, other.path);
  if (at.length === 0) return other.op === "replace" || other.op === "add" ? CONFLICT : path; // the whole state
  if (startsWith(at, path) && at.length > path.length) return path; // other is inside: mine covers it
  const parent = at.slice(0, -1);
  const last = at[at.length - 1];
  if (inArray(parent) && startsWith(path, parent) && path.length > parent.length) {
    const mine = path[parent.length];
    if (mine === "-") return path;
    if (!INDEX.test(mine) || !(INDEX.test(last) || last === "-")) return path;
    const i = Number(mine);
    const own = path.length === parent.length + 1; // my op is at the item itself
    if (other.op === "add") {
      if (last === "-") return path;
      const j = Number(last);
      return i > j || (i === j && (first || !(adds && own))) ? [...parent, String(i + 1), ...path.slice(parent.length + 1)] : path;
    }
    if (other.op === "remove") {
      const j = Number(last);
      if (i < j) return path;
      if (i === j) return adds && own ? path : CONFLICT;
      return [...parent, String(i - 1), ...path.slice(parent.length + 1)];
    }
    // replace of an item: what is inside it is not there any more; the item itself is mine
    if (startsWith(path, at)) return path.length === at.length ? path : CONFLICT;
    return path;
  }
  if (!startsWith(path, at)) return path;
  if (path.length === at.length) { // one place, both wrote it: mine wins
    return other.op === "remove" && !adds ? CONFLICT : path;
  }
  return CONFLICT; // other removed or replaced what holds my place
}

const encode = (parts) => parts.map((t) => `/${t.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");

/** `op` moved past `other` (both made on one state), or CONFLICT / null (nothing left of it). */
function pastOp(op, other, mine, inArray) {
  const places = op.op === "move" || op.op === "copy" ? ["from", "path"] : ["path"];
  const out = { ...op };
  for (const key of places) {
    const adds = key === "path" && (op.op === "add" || op.op === "move" || op.op === "copy");
    const moved = pastPath(tokens(op, op[key]), adds, other, mine, inArray);
    if (moved === CONFLICT) return mine ? CONFLICT : null;
    out[key] = encode(moved);
  }
  return out;
}

/**
 * The ops of an edit made on state `S`, moved onto the state `through` turns `S` into (the
 * changes others made meanwhile, e.g. `diffState(S, T)`): indices shifted past the items added
 * and removed before them; where both wrote one place, the edit's write stays. Null when a
 * place the edit reads or writes is gone (or was replaced as a whole).
 */
export function rebaseOps(ops, through, state) {
  const inArray = (parent) => {
    if (state !== undefined) {
      try {
        const value = valueAt(null, encode(parent), state);
        if (Array.isArray(value)) return true;
        if (isObject(value)) return false;
      } catch {
        // not in the state the edit was made on: read the tokens
      }
    }
    return true;
  };
  let theirs = through.filter((op) => op.op !== "test");
  const out = [];
  for (const op of ops) {
    let mine = op;
    const next = [];
    for (const other of theirs) {
      const moved = pastOp(mine, other, true, inArray);
      if (moved === CONFLICT) return null;
      const expanded = mine.op === "move" ? [{ op: "remove", path: mine.from }, { op: "add", path: mine.path }] : [mine];
      let kept = other;
      for (const part of expanded) {
        if (kept === null || part.op === "test") break;
        kept = pastOp(kept, part.op === "copy" ? { op: "add", path: part.path } : part, false, inArray);
      }
      if (kept !== null) next.push(kept);
      mine = moved;
    }
    out.push(mine);
    theirs = next;
  }
  return out;
}

// -- server-sent events over fetch ------------------------------------------------------------

/** The events of an SSE body (`{id, event, data}`, `id` the last id seen), as they come. */
async function* sseEvents(body, signal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data = [];
  let event = "";
  let id = null;
  let idSeen = false;
  try {
    while (true) {
      if (signal?.aborted) return;
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let at;
      while ((at = buffer.search(/\r\n|\r|\n/)) !== -1) {
        if (buffer[at] === "\r" && at === buffer.length - 1) break; // maybe half of a \r\n
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + (buffer.startsWith("\r\n", at) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield { id: idSeen ? id : null, event: event || "message", data: data.join("\n") };
          data = [];
          event = "";
          continue;
        }
        if (line[0] === ":") continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value[0] === " ") value = value.slice(1);
        if (field === "data") data.push(value);
        else if (field === "event") event = value;
        else if (field === "id" && !value.includes("\0")) {
          id = value;
          idSeen = true;
        } else if (field === "retry" && /^[0-9]+$/.test(value)) yield { retry: Number(value) };
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

const sleep = (ms, signal) => new Promise((resolve) => {
  if (signal?.aborted) return resolve();
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
});

/** How long a 429 or 503 asks to wait (its Retry-After, in ms), or `fallback`. */
function retryAfter(response, fallback) {
  const value = response.headers.get("retry-after");
  if (value && /^[0-9]+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = value ? Date.parse(value) : NaN;
  return Number.isNaN(date) ? fallback : Math.max(0, date - Date.now());
}

async function readJson(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

// -- LiveThread -------------------------------------------------------------------------------

const MAX_DELAY = 5000;
const MAX_RETRIES = 30; // how many times an edit is sent again while the thread is busy
const WAIT_SHOWN = 5000; // how long an edit waits for this page's earlier ones to be shown

/**
 * One thread's shared state, live: the server's versions as they come (its events feed), with
 * this page's edits on top until the server has them.
 */
export class LiveThread {
  constructor({ baseUrl, agent, threadId, headers, fetch: fetchFn, onRefused, onError } = {}) {
    if (typeof baseUrl !== "string") throw new TypeError("LiveThread needs baseUrl (the server's URL)");
    if (typeof agent !== "string" || !agent) throw new TypeError("LiveThread needs agent (the agent's name)");
    if (typeof threadId !== "string" || !threadId) throw new TypeError("LiveThread needs threadId");
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.agent = agent;
    this.threadId = threadId;
    this.headers = headers;
    this.fetch = fetchFn ?? ((...args) => globalThis.fetch(...args));
    this.onRefused = onRefused;
    this.onError = onError;
    /** The latest version the server told (its number, and its state). */
    this.server = { version: null, state: {} };
    /** The state shown: the server's with this page's edits not yet in it. */
    this.state = {};
    this.running = false;
    this.connected = false;
    /** How many times the feed was read again from a fresh snapshot. */
    this.resyncs = 0;
    // This page's edits the server does not show yet: {ops, on (the state they were made on),
    // base (its version), behind (made on earlier ones of these), status (queued, sending,
    // sent), version (the one it became), done, resolve}.
    this._edits = [];
    this._listeners = new Set();
    this._lastId = null;
    this._stream = null;
    this._started = null;
    this._sending = false;
    this._waiters = new Set();
    this._generation = 0;
  }

  get version() {
    return this.server.version;
  }

  /** How many of this page's edits the server does not show yet. */
  get pending() {
    return this._edits.length;
  }

  /** Follow the thread's events (again, after `stop()`); resolves once its first snapshot is
   * in, rejects if the server refuses the thread (401, 403). A thread not started yet (404:
   * its first run starts it) is waited for, as a cut connection is. */
  start() {
    if (this._started && !this._stopped) return this._started.promise;
    let resolve;
    let reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    this._started = { promise, resolve, reject, done: false };
    this._stopped = false;
    void this._follow(++this._generation);
    return promise;
  }

  /** Stop following the thread (edits already made are still sent). */
  stop() {
    this._stopped = true;
    this._stream?.abort();
    this._wake?.abort();
    if (this._started && !this._started.done) {
      this._started.done = true;
      this._started.reject(new Error("the thread was stopped before its first snapshot"));
    }
  }

  /** Call `listener({state, version, running, pending})` on every change; gives the
   * function that stops it. */
  subscribe(listener) {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }

  /**
   * Edit the state: `ops` (RFC 6902) apply to `state` at once, and go to the server (in order,
   * one edit at a time) on the version they were made on. Throws a `PatchError` when they do
   * not apply to `state`. Resolves `{ok: true, version, delta, base, ops}` once the server
   * committed them (as version `version`: `delta` the ops as applied; `base` and `ops` as sent), or
   * `{ok: false, error, status, version, state, ops, base}` when it refused them (`onRefused`
   * is told the same; `version` and `state` are the thread's now).
   */
  edit(ops) {
    if (this.server.version == null) {
      throw new Error(`thread ${this.threadId} has no version of its state yet: start() it, ` +
                      "and edit once a version is in (a run makes the first)");
    }
    const on = this.state;
    this.state = applyOps(on, ops);
    // Made on `on`: the server's version `base`, or (`behind`) that with edits of this page
    // in it that the server does not show yet.
    const edit = { ops: clone(ops), status: "queued", on, base: this.server.version, behind: this._edits.length > 0 };
    edit.done = new Promise((resolve) => { edit.resolve = resolve; });
    this._edits.push(edit);
    this._notify();
    void this._pump();
    return edit.done;
  }

  /** Resolves once no edit of this page is pending: each answered, and the version it made
   * shown (or it was refused). */
  flush() {
    if (this._edits.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = this.subscribe(({ pending }) => {
        if (pending === 0) {
          stop();
          resolve();
        }
      });
    });
  }

  // -- the feed --------------------------------------------------------------------------------

  async _headers(extra) {
    const given = typeof this.headers === "function" ? await this.headers() : this.headers;
    return { ...Object.fromEntries(new Headers(given ?? {}).entries()), ...extra };
  }

  async _follow(generation) {
    const stopped = () => this._stopped || this._generation !== generation;
    let failures = 0;
    let delay = 0;
    while (!stopped()) {
      if (delay > 0) {
        this._wake = new AbortController();
        await sleep(delay, this._wake.signal);
        if (stopped()) break;
      }
      const controller = new AbortController();
      this._stream = controller;
      let got = false;
      try {
        const extra = { Accept: "text/event-stream" };
        if (this._lastId) extra["Last-Event-ID"] = this._lastId;
        const response = await this.fetch(`${this.baseUrl}/threads/${encodeURIComponent(this.threadId)}/events`,
                                          { headers: await this._headers(extra), signal: controller.signal });
        if (!response.ok) {
          const body = await readJson(response);
          const error = new Error(`GET /threads/${this.threadId}/events answered ${response.status}` +
                                  (body?.error ? `: ${body.error}` : ""));
          error.status = response.status;
          // 404: the thread is not there yet (its first run starts it): wait for it
          if (response.status >= 400 && response.status < 500 && response.status !== 404 &&
              response.status !== 408 && response.status !== 429) {
            this._fail(error, true);
            return;
          }
          this._fail(error, false);
          failures++;
          delay = retryAfter(response, this._backoff(failures));
          continue;
        }
        this.connected = true;
        for await (const message of sseEvents(response.body, controller.signal)) {
          if (message.retry !== undefined) continue;
          if (message.id !== null) this._lastId = message.id;
          let item;
          try {
            item = JSON.parse(message.data);
          } catch {
            continue;
          }
          got = true;
          failures = 0;
          this._take(item, controller);
          if (controller.signal.aborted) break;
        }
      } catch (error) {
        if (!stopped() && !controller.signal.aborted) this._fail(error, false);
      } finally {
        this.connected = false;
      }
      if (stopped()) break;
      if (controller.signal.aborted && this._resyncing) {
        this._resyncing = false;
        delay = 0;
        continue;
      }
      failures = got ? 1 : failures + 1;
      delay = this._backoff(failures);
    }
  }

  _backoff(failures) {
    const base = Math.min(MAX_DELAY, 250 * 2 ** Math.max(0, failures - 1));
    return base / 2 + Math.random() * (base / 2);
  }

  _fail(error, fatal) {
    if (fatal) {
      this._stopped = true;
      if (this._started && !this._started.done) {
        this._started.done = true;
        this._started.reject(error);
      }
    }
    try {
      this.onError?.(error);
    } catch (e) {
      console.error(e);
    }
  }

  /** Read the feed again from a fresh snapshot (the thread moved in a way its items do not
   * tell: a version that is not the next one). */
  _resync(controller) {
    this.resyncs++;
    this._lastId = null;
    this._resyncing = true;
    controller.abort();
  }

  _take(item, controller) {
    switch (item.type) {
      case "snapshot":
        this.server = { version: item.version ?? null, state: item.state ?? {} };
        this.running = Boolean(item.running);
        if (this._started && !this._started.done) {
          this._started.done = true;
          this._started.resolve();
        }
        break;
      case "state": {
        const at = this.server.version;
        if (at != null && item.version <= at) return; // had it (an edit's answer told it)
        if (at == null || item.version !== at + 1) return this._resync(controller);
        const before = this.server.state;
        try {
          this.server = { version: item.version, state: applyOps(before, item.delta ?? []) };
        } catch {
          return this._resync(controller);
        }
        if (item.by === "person") this._recognize(item, before);
        break;
      }
      case "run_started":
        this.running = true;
        // A run that starts from a state sent with it makes a version no item tells.
        if (typeof item.version === "number" && item.version > (this.server.version ?? 0)) {
          this._resync(controller);
        }
        break;
      case "run_finished":
        this.running = false;
        break;
      default:
        return;
    }
    this._render();
  }

  // -- the edits -------------------------------------------------------------------------------

  /** A person's version the feed brought before the server answered this page's edit in
   * flight (a run takes an edit at once, and answers it once it keeps it): when its delta is
   * that edit, as moved onto the version before (`before`), it is that edit's version, shown
   * now; the edit is no longer laid on top of it (an add would show twice until the answer).
   * It stays pending until the answer comes, as every edit does. */
  _recognize(item, before) {
    const edit = this._edits.find((e) => e.status === "sending");
    if (!edit || edit.shownIn != null) return;
    const ops = edit.on === before ? edit.ops : rebaseOps(edit.ops, diffState(edit.on, before), edit.on);
    if (ops !== null && deepEqual(ops, item.delta)) edit.shownIn = item.version;
  }

  /** The state shown: the server's latest, with the edits it does not show yet on top, each
   * moved past what changed since it was made (one whose place is gone left out). */
  _render() {
    const version = this.server.version;
    this._edits = this._edits.filter((e) => !(e.status === "sent" && version != null && version >= e.version));
    let state = this.server.state;
    for (const edit of this._edits) {
      if (edit.shownIn != null && version >= edit.shownIn) continue; // the server's state has it
      const ops = edit.on === state ? edit.ops : rebaseOps(edit.ops, diffState(edit.on, state), edit.on);
      if (ops === null) continue; // its place is gone: the server will say what becomes of it
      try {
        state = applyOps(state, ops);
      } catch {
        // (the same)
      }
    }
    this.state = state;
    this._notify();
  }

  _notify() {
    for (const waiter of [...this._waiters]) waiter();
    const view = { state: this.state, version: this.server.version, running: this.running, pending: this._edits.length };
    for (const listener of [...this._listeners]) {
      try {
        listener(view);
      } catch (error) {
        console.error(error);
      }
    }
  }

  async _pump() {
    if (this._sending) return;
    this._sending = true;
    try {
      let edit;
      while ((edit = this._edits.find((e) => e.status === "queued"))) {
        edit.status = "sending";
        // An edit made on edits of this page's own goes once the server shows them, moved
        // onto that version (the server rebases from a version it has, not from this page's).
        if (edit.behind) await this._until(() => this._edits[0] === edit, WAIT_SHOWN);
        await this._send(edit);
      }
    } finally {
      this._sending = false;
    }
  }

  /** Resolves once `ready()` holds (checked at each change), or after `ms`. */
  _until(ready, ms) {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this._waiters.delete(check);
        resolve();
      };
      const check = () => { if (ready()) done(); };
      const timer = setTimeout(done, ms);
      this._waiters.add(check);
    });
  }

  _refuse(edit, refusal, base) {
    this._edits = this._edits.filter((e) => e !== edit);
    const told = { ops: edit.ops, ...refusal, base };
    this._render();
    edit.resolve({ ok: false, ...told });
    try {
      this.onRefused?.(told);
    } catch (error) {
      console.error(error);
    }
  }

  async _send(edit) {
    // The version the ops were made on: the one this page had then; or, for an edit made on
    // earlier ones of this page's (now shown), the latest, the ops moved onto it.
    let base = edit.base;
    let ops = edit.ops;
    if (edit.behind) {
      base = this.server.version;
      ops = edit.on === this.server.state ? edit.ops : rebaseOps(edit.ops, diffState(edit.on, this.server.state), edit.on);
      if (ops === null) {
        return this._refuse(edit, {
          error: "the shared state changed where this edit was made, before it could be sent: " +
                 "the place it edits is gone; nothing of it was applied",
          status: 409, version: this.server.version, state: this.server.state,
        }, base);
      }
      edit.on = this.server.state; // shown on top of the server's state as sent
      edit.ops = ops;
    }
    const url = `${this.baseUrl}/agents/${encodeURIComponent(this.agent)}/threads/${encodeURIComponent(this.threadId)}/state`;
    let failures = 0;
    while (true) {
      let response;
      try {
        response = await this.fetch(url, {
          method: "PATCH",
          headers: await this._headers({ "Content-Type": "application/json" }),
          body: JSON.stringify({ base, patch: ops }),
        });
      } catch (error) {
        // It may or may not have reached the server: not sent again (an add would be twice);
        // the feed shows what the thread has.
        return this._refuse(edit, {
          error: `the edit could not be sent (${error?.message ?? error}); the thread shows whether it was taken`,
          status: 0, version: this.server.version, state: this.server.state,
        }, base);
      }
      const body = await readJson(response);
      if (response.ok) {
        // Shown on top of the server's state until the feed (or this answer) brings its version.
        // An answer with no delta made no version: its version is the latest, someone else's,
        // which only the feed can bring.
        edit.status = "sent";
        edit.version = body.version;
        const at = this.server.version;
        if (at != null && body.version === at + 1 && Array.isArray(body.delta) && body.delta.length) {
          try {
            this.server = { version: body.version, state: applyOps(this.server.state, body.delta) };
          } catch {
            // the feed brings it
          }
        }
        this._render();
        edit.resolve({ ok: true, version: body.version, delta: body.delta ?? [], base, ops });
        return;
      }
      const refused = response.status === 409 && body && "state" in body && "version" in body;
      const busy = response.status === 429 || response.status === 503 ||
        (response.status === 409 && !refused) || response.status >= 500;
      if (refused) {
        if (this.server.version == null || body.version >= this.server.version) {
          this.server = { version: body.version, state: body.state };
        }
        return this._refuse(edit, { error: body.error, status: 409, version: body.version, state: body.state }, base);
      }
      if (busy && failures < MAX_RETRIES) {
        failures++;
        await sleep(retryAfter(response, Math.min(2000, 50 * 2 ** failures) * (0.5 + Math.random() / 2)));
        continue;
      }
      return this._refuse(edit, {
        error: body?.error ?? `the server answered ${response.status}`,
        status: response.status, field: body?.field, version: this.server.version, state: this.server.state,
      }, base);
    }
  }
}

// -- @ag-ui/client ----------------------------------------------------------------------------

/**
 * Keep an @ag-ui/client agent (`AbstractAgent`, `HttpAgent`; 0.0.x and 1.x) in step with
 * `thread`: `agent.state` is the thread's state (between runs; during a run, the run's stream
 * tells every version), the page's `agent.setState` becomes an edit of the thread, and every
 * run sends the thread's latest version with its number (`forwardedProps.stateVersion`), so
 * the server takes no stale state for the person's edits. Gives the function that stops it.
 */
export function followAgent(thread, agent) {
  let on = true;
  let synced = clone(agent.state); // the state the agent was last given (or a run showed)
  let eventVersion = null; // the stateVersion of the last STATE event the agent applied
  // The page's edits made while a run or a connect goes on, before the thread has a version
  // (`early`); those of them a state that stream brought replaced (`lost`: made again once it
  // ends); and, once it ended, all of them (`unsent`): sent when the thread has a version,
  // unless a run takes them first as the thread's start. An edit made before the thread has a
  // version with nothing going on is the agent's state, which the next run takes.
  let early = [];
  let lost = [];
  let unsent = [];

  const warn = (error) =>
    console.warn(`followAgent: the agent's state change was not applied to the thread: ${error.message}`);
  /** `ops`, made on `madeOn`, moved onto `state` (null when the place they change is gone). */
  const moved = (ops, madeOn, state) =>
    deepEqual(madeOn, state) ? ops : rebaseOps(ops, diffState(madeOn, state), madeOn);
  /** An edit the page made on `madeOn`, as an edit of the thread (moved onto what the thread
   * shows, where that is ahead of the agent, e.g. during a run). */
  const editThread = (ops, madeOn) => {
    try {
      const onThread = moved(ops, madeOn, thread.state);
      if (onThread === null) throw new Error("the place it changes is gone from the thread");
      thread.edit(onThread);
    } catch (error) {
      warn(error);
    }
  };
  /** The page changed the agent's state since: that change, as an edit of the thread (before
   * the thread has a version: see `early`). */
  const capture = (state) => {
    if (deepEqual(state, synced)) return;
    const madeOn = synced;
    const ops = diffState(madeOn, state);
    synced = clone(state);
    if (thread.server.version != null) editThread(ops, madeOn);
    else if (agent.isRunning) early.push({ ops, madeOn });
  };
  /** The edits a run or a connect replaced while it went on, made again on what it brought. */
  const replay = () => {
    const edits = lost;
    lost = [];
    if (thread.server.version != null) {
      for (const { ops, madeOn } of edits) editThread(ops, madeOn);
      return;
    }
    let state = agent.state;
    for (const { ops, madeOn } of edits) {
      try {
        const onState = moved(ops, madeOn, state);
        if (onState === null) throw new Error("the place it changes is gone from the state");
        state = applyOps(state, onState);
      } catch (error) {
        warn(error);
      }
    }
    const ops = diffState(agent.state, state);
    if (ops.length > 0) unsent.push({ ops, madeOn: clone(agent.state) });
    synced = clone(state);
    agent.setState(state);
  };
  const sync = () => {
    if (!on || agent.isRunning) return;
    unsent.push(...early); // (still in the agent's state)
    early = [];
    if (lost.length > 0) replay();
    if (thread.server.version == null) return;
    const edits = unsent;
    unsent = [];
    for (const { ops, madeOn } of edits) editThread(ops, madeOn);
    capture(agent.state);
    if (deepEqual(agent.state, thread.state)) return;
    synced = clone(thread.state);
    agent.setState(thread.state);
  };
  const seen = ({ event }) => {
    const version = event?.metadata?.stateVersion;
    if (Number.isInteger(version)) eventVersion = version;
  };
  const unsubscribe = thread.subscribe(sync);
  const subscription = agent.subscribe({
    onStateSnapshotEvent: seen,
    onStateDeltaEvent: seen,
    onStateChanged: ({ state, input }) => {
      if (!on) return;
      if (input === undefined) {
        capture(state); // setState: the page's, or ours (then nothing changed)
        return;
      }
      synced = clone(state); // a run's event: the server's version, without the page's edits
      lost.push(...early); // made during it
      early = [];
    },
    onRunFinalized: () => void setTimeout(sync, 0),
  });
  agent.use((input, next) => {
    if (!on) return next.run(input);
    if (thread.server.version == null) {
      early = []; // the run takes the page's edits: its state is the thread's start
      unsent = [];
      if (eventVersion == null) return next.run(input);
      return next.run({ ...input, forwardedProps: { ...input.forwardedProps, stateVersion: eventVersion } });
    }
    capture(input.state);
    // The person's edits go by the thread's own requests: the run is sent the state the
    // server has (its latest known here), so none of them is taken twice.
    return next.run({
      ...input,
      state: clone(thread.server.state),
      forwardedProps: { ...input.forwardedProps, stateVersion: thread.server.version },
    });
  });
  sync();
  return () => {
    on = false;
    unsubscribe();
    subscription.unsubscribe();
  };
}

// -- the AI SDK -------------------------------------------------------------------------------

const STATE_PARTS = ["data-state", "data-state-version"];

/**
 * `messages` (AI SDK UI messages) with the `data-state` and `data-state-version` parts of all
 * but the last message that has one left out: what the server reads of them (the state the
 * page last received, and its number) stays, and the request no longer carries every past
 * state. For `DefaultChatTransport`'s `prepareSendMessagesRequest`; the chat's own messages are
 * left as they are.
 */
export function stripOldStateParts(messages) {
  const last = {};
  messages.forEach((message, index) => {
    for (const part of message?.parts ?? []) {
      if (STATE_PARTS.includes(part?.type)) last[part.type] = index;
    }
  });
  return messages.map((message, index) => {
    const parts = message?.parts;
    if (!Array.isArray(parts)) return message;
    const kept = parts.filter((part) => !STATE_PARTS.includes(part?.type) || last[part.type] === index);
    return kept.length === parts.length ? message : { ...message, parts: kept };
  });
}

/**
 * An `HttpAgent` class that can come back to a thread: its `connect(input)` (what
 * `agent.connectAgent()` calls, as CopilotKit does for a reloaded page) POSTs the thread's
 * RunAgentInput to `<run url>/connect` (a pyox-agents server's `POST /agents/{name}/ag-ui/connect`)
 * and reads the answer as a run's events: the thread's messages under their ids, its state, the
 * live tail of a run still going. Give it the client's `HttpAgent`, `runHttpRequest` and
 * `transformHttpEventStream` (from `@ag-ui/client`, or from `@copilotkit/react-core/v2` so that the
 * agent is the class CopilotKit expects): this package depends on neither.
 *
 *   import { HttpAgent, runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
 *   const ConnectingAgent = connectingAgent(HttpAgent, { runHttpRequest, transformHttpEventStream });
 *   const agent = new ConnectingAgent({ url: "/agents/todo/ag-ui", threadId });
 */
export function connectingAgent(HttpAgent, { runHttpRequest, transformHttpEventStream }) {
  return class ConnectingAgent extends HttpAgent {
    /** Where `connect` posts: the run URL with `/connect` added to its path. */
    connectUrl() {
      const [path, query] = this.url.split("?", 2);
      return `${path.replace(/\/+$/, "")}/connect${query === undefined ? "" : `?${query}`}`;
    }

    connect(input) {
      return transformHttpEventStream(runHttpRequest(() => this.fetch(this.connectUrl(), this.requestInit(input))));
    }
  };
}
