// connectingAgent: the class it makes posts the thread's input to `<run url>/connect` and reads
// the answer with the client's own helpers (the real clients are exercised end to end by
// tests/e2e/test_ag_ui_connect_e2e.py, on @ag-ui/client 1.0.0 and 0.0.59).
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectingAgent } from "../index.js";

class FakeHttpAgent {
  constructor({ url }) { this.url = url; this.fetched = []; }
  fetch(url, init) { this.fetched.push([url, init]); return Promise.resolve("response"); }
  requestInit(input) { return { method: "POST", body: JSON.stringify(input) }; }
}

test("connect posts the input to the run URL's /connect, query kept", async () => {
  const seen = [];
  const Connecting = connectingAgent(FakeHttpAgent, {
    runHttpRequest: (request) => { seen.push("request"); return request(); },
    transformHttpEventStream: (source) => { seen.push("transform"); return source; },
  });
  const agent = new Connecting({ url: "http://x/agents/todo/ag-ui/?key=1" });
  assert.ok(agent instanceof FakeHttpAgent);
  assert.equal(agent.connectUrl(), "http://x/agents/todo/ag-ui/connect?key=1");
  assert.equal(await agent.connect({ threadId: "t1" }), "response");
  assert.deepEqual(seen, ["request", "transform"]);
  assert.deepEqual(agent.fetched, [["http://x/agents/todo/ag-ui/connect?key=1",
                                    { method: "POST", body: "{\"threadId\":\"t1\"}" }]]);
});
