// @pyox-agents/copilotkit-runtime: CopilotKit's Node runtime (`@copilotkit/runtime` v2) in
// front of a pyox-agents server, with the server as the truth of the threads. Types and the
// contract of each method: index.d.ts; how to use it: README.md.
//
// The runtime's own runner (`InMemoryAgentRunner`) keeps each thread's events in the memory of
// its process: a restarted runtime, or another process behind a load balancer, knows nothing
// of a thread, so a reloaded page gets nothing back. The server already keeps everything (the
// conversation, the shared state, a paused run's approval, the run going on), so this runner
// asks it: runs go through the agent's AG-UI endpoint, `connect` through its `/connect` route,
// and the routes where the runtime passes the runner no caller (stop, the thread list) are
// served by the runtime's documented hooks, as the person whose request it is.
import { runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
import { createRunEventFinalizer } from "@copilotkit/runtime/v2";
import { Observable } from "rxjs";

/** What `hooks()` tells the page the runtime serves (`RuntimeInfo.threadEndpoints`). */
const THREAD_ENDPOINTS = { list: true, inspect: false, mutations: true, realtimeMetadata: false };

/** How many threads a runner remembers the agent of (for `stop` called without a route). */
const REMEMBERED_THREADS = 10000;

export class PyoxAgentRunner {
  #url;
  #agents;
  #headers;
  #forward;
  #threadAgents = new Map();

  constructor(options) {
    const { url, agents = {}, headers = {}, forwardHeaders = ["authorization"] } = options ?? {};
    if (typeof url !== "string" || !/^https?:\/\/[^/]/.test(url)) {
      throw new TypeError(`PyoxAgentRunner needs { url }: where the pyox-agents server listens, such as "http://127.0.0.1:8000"; got ${JSON.stringify(url)}`);
    }
    this.#url = url.replace(/\/+$/, "");
    this.#agents = { ...agents };
    this.#headers = headers;
    this.#forward = forwardHeaders.map((name) => name.toLowerCase());
  }

  /** The AG-UI endpoint of the runtime's agent `agentId` on the server. */
  agentUrl(agentId) {
    const name = this.#agents[agentId] ?? agentId;
    return `${this.#url}/agents/${encodeURIComponent(name)}/ag-ui`;
  }

  run(request) {
    const { threadId, agent, input } = request;
    this.#remember(threadId, agent.agentId);
    return new Observable((subscriber) => {
      const finalizer = createRunEventFinalizer();
      const end = (options) => {
        for (const event of finalizer.finalize(options)) subscriber.next(event);
        subscriber.complete();
      };
      agent
        .runAgent(input, {
          onEvent: ({ event }) => {
            finalizer.observe(event);
            subscriber.next(event);
          },
        })
        .then(() => end({}), (error) => end({ interruptionMessage: messageOf(error) }));
      // A page that goes away (a reload, a closed tab) leaves the run going, as the runtime's
      // own runner does: its request reaches the server even when the page left at once, and
      // the run is read to its end; `connect` follows it again. A stop ends it.
      return undefined;
    });
  }

  connect(request) {
    const { threadId, agentId, headers = {} } = request;
    return new Observable((subscriber) => {
      if (!agentId) {
        subscriber.next(runError(new Error("connect needs the agentId of the thread's agent"), "CONNECT_FAILED"));
        subscriber.complete();
        return undefined;
      }
      this.#remember(threadId, agentId);
      const aborter = new AbortController();
      const body = JSON.stringify({
        threadId, runId: globalThis.crypto.randomUUID(), state: {}, messages: [], tools: [],
        context: [], forwardedProps: {},
      });
      const init = {
        method: "POST", body, signal: aborter.signal,
        headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" },
      };
      const events = transformHttpEventStream(runHttpRequest(() => fetch(`${this.agentUrl(agentId)}/connect`, init)));
      const inner = events.subscribe({
        next: (event) => subscriber.next(event),
        error: (error) => {
          subscriber.next(runError(error, "CONNECT_FAILED"));
          subscriber.complete();
        },
        complete: () => subscriber.complete(),
      });
      return () => {
        inner.unsubscribe();
        aborter.abort();
      };
    });
  }

  async isRunning({ threadId }) {
    const response = await fetch(`${this.#url}/threads/${encodeURIComponent(threadId)}`, {
      headers: await this.#ownHeaders(),
    });
    if (response.status === 404) return false;
    if (!response.ok) throw await httpError(response, `GET /threads/${threadId}`);
    return (await response.json()).running === true;
  }

  async stop({ threadId, runId }) {
    const agentId = this.#threadAgents.get(threadId);
    if (agentId === undefined) return false;
    const response = await this.#stop(agentId, threadId, await this.#ownHeaders(), runId);
    if (!response.ok) throw await httpError(response, `stop of thread ${threadId}`);
    return (await response.json()).stopped === true;
  }

  hooks(own = {}) {
    return {
      ...own,
      onBeforeHandler: async (context) => {
        const replaced = await own.onBeforeHandler?.(context);
        const request = replaced instanceof Request ? replaced : context.request;
        let answer;
        try {
          answer = await this.#serve(context.route, request);
        } catch (error) {
          answer = Response.json({
            error: `the pyox-agents server at ${this.#url} did not answer (${messageOf(error)}); check that it runs and that PyoxAgentRunner's url names it`,
          }, { status: 502 });
        }
        if (answer !== undefined) throw answer; // the hooks' documented short-circuit
        return replaced;
      },
      onResponse: async (context) => {
        const response = await withThreadEndpoints(context);
        const replaced = await own.onResponse?.({ ...context, response });
        return replaced instanceof Response ? replaced : response;
      },
    };
  }

  // The routes served as the caller (`hooks`): undefined for the runtime's own.
  async #serve(route, request) {
    const headers = this.#callerHeaders(request);
    const thread = `${this.#url}/threads/${encodeURIComponent(route.threadId ?? "")}`;
    switch (route.method) {
      case "agent/stop": {
        this.#remember(route.threadId, route.agentId);
        const scope = await stopScope(request);
        if (scope instanceof Response) return scope;
        const response = await this.#stop(route.agentId, route.threadId, headers, scope.runId);
        return stopAnswer(response, route.threadId, scope.runId);
      }
      case "threads/list":
        return this.#listThreads(new URL(request.url).searchParams, headers);
      case "threads/archive":
        return relay(await send(thread, "PATCH", headers, { archived: true }));
      case "threads/update":
        if (request.method === "DELETE") return relay(await send(thread, "DELETE", headers));
        return relay(await send(thread, "PATCH", headers, await renameOrRestore(request)));
      default:
        return undefined;
    }
  }

  async #listThreads(query, headers) {
    const params = new URLSearchParams();
    for (const name of ["limit", "cursor"]) {
      const value = query.get(name);
      if (value) params.set(name, value);
    }
    // `useThreads({ includeArchived: true })`: the archived threads too, each with its flag
    if (query.get("includeArchived") === "true") params.set("archived", "any");
    const response = await fetch(`${this.#url}/threads?${params}`, { headers });
    if (!response.ok) return relay(response);
    const page = await response.json();
    const agentId = query.get("agentId") ?? "";
    return Response.json({
      threads: page.threads.map((thread) => copilotKitThread(thread, agentId)),
      nextCursor: page.next ?? null,
    });
  }

  // The server's stop of the thread's run; with `runId`, only if it is the run that the
  // request with that runId started (a stop that arrives after it ended leaves the next one).
  #stop(agentId, threadId, headers, runId) {
    const url = `${this.agentUrl(agentId)}/${encodeURIComponent(threadId)}/stop`;
    return runId === undefined ? send(url, "POST", headers) : send(url, "POST", headers, { runId });
  }

  #callerHeaders(request) {
    const headers = {};
    for (const name of this.#forward) {
      const value = request.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    return headers;
  }

  async #ownHeaders() {
    return typeof this.#headers === "function" ? await this.#headers() : { ...this.#headers };
  }

  #remember(threadId, agentId) {
    if (!threadId || !agentId) return;
    this.#threadAgents.delete(threadId);
    this.#threadAgents.set(threadId, agentId);
    if (this.#threadAgents.size > REMEMBERED_THREADS) {
      this.#threadAgents.delete(this.#threadAgents.keys().next().value);
    }
  }
}

/** A thread of the server's `GET /threads` as CopilotKit's `useThreads` reads one. */
function copilotKitThread(thread, agentId) {
  const updatedAt = thread.updated_at ?? thread.created_at ?? new Date(0).toISOString();
  return {
    id: thread.id,
    agentId,
    name: thread.title ?? null,
    archived: thread.archived === true,
    createdAt: thread.created_at ?? updatedAt,
    updatedAt,
    lastRunAt: updatedAt,
  };
}

/** The `{ runId? }` of a stop request's body as the runtime's own stop route reads it (an
 * empty body: `{}`), or the 400 it answers for a body that is not one. In `single-route`
 * mode the hooks see the runtime's envelope (`{ method: "agent/stop", params, body? }`): its
 * `body` is the stop's. */
async function stopScope(request) {
  const refused = (error) => Response.json({ error }, { status: 400 });
  let body;
  try {
    const raw = await request.clone().text();
    body = raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return refused("Invalid stop request");
  }
  if (body?.method === "agent/stop" && "params" in body) body = body.body ?? {};
  if (typeof body !== "object" || body === null || Array.isArray(body)
    || Object.keys(body).some((key) => key !== "runId")) return refused("Invalid stop request");
  if (!("runId" in body)) return {};
  if (typeof body.runId !== "string" || !body.runId.trim()) return refused("Invalid runId");
  return { runId: body.runId };
}

/** The server's answer to a stop, in the shape the runtime's own stop route answers. */
async function stopAnswer(response, threadId, runId) {
  if (!response.ok) return relay(response);
  const { stopped } = await response.json();
  if (!stopped) {
    return Response.json({
      stopped: false,
      message: runId === undefined
        ? `No active run for thread '${threadId}'.`
        : `Run '${runId}' is not the active run for thread '${threadId}'.`,
    });
  }
  return Response.json({
    stopped: true,
    interrupt: { type: "RUN_ERROR", message: "Run stopped by user", code: "STOPPED" },
  });
}

/** The body of a `PATCH /threads/{id}` from `useThreads` (`{name}` or `{archived: false}`)
 * as the server's `{title, archived}`. */
async function renameOrRestore(request) {
  let body = {};
  try {
    body = await request.json();
  } catch {
    // an empty body: the server answers what is missing
  }
  const patch = {};
  if (typeof body.name === "string") patch.title = body.name;
  if (typeof body.archived === "boolean") patch.archived = body.archived;
  return patch;
}

function send(url, method, headers, body) {
  if (body === undefined) return fetch(url, { method, headers });
  return fetch(url, {
    method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body),
  });
}

/** The server's response as it is (status and JSON body), for the page. */
async function relay(response) {
  return new Response(await response.text(), {
    status: response.status,
    headers: { "content-type": response.headers.get("content-type") ?? "application/json" },
  });
}

/** The runtime's `/info` answer, saying the thread routes are served (by `hooks`). */
async function withThreadEndpoints({ route, response }) {
  if (route?.method !== "info" || !response.ok) return response;
  let info;
  try {
    info = await response.clone().json();
  } catch {
    return response; // not the runtime's JSON: left as it is
  }
  info.threadEndpoints = { ...THREAD_ENDPOINTS };
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify(info), { status: response.status, headers });
}

async function httpError(response, what) {
  const text = await response.text();
  const hint = response.status === 401 || response.status === 403
    ? "; the runner's own calls carry its `headers` option: give it a credential the server accepts"
    : "";
  const error = new Error(`${what} failed: HTTP ${response.status}: ${text.slice(0, 500)}${hint}`);
  error.status = response.status;
  return error;
}

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

function runError(error, code) {
  const status = typeof error?.status === "number" ? error.status : undefined;
  return { type: "RUN_ERROR", message: messageOf(error), code: status ? `HTTP_${status}` : code };
}
