// Unit tests of the pure parts: node --test clients/live-state/test
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyOps, diffState, PatchError, rebaseOps, stripOldStateParts } from "../index.js";

const START = { todos: [{ id: "a", done: false }, { id: "b", done: true }], note: "n" };

test("applyOps applies add, remove, replace, move, copy and test, leaving the input as it was", () => {
  const before = structuredClone(START);
  const after = applyOps(START, [
    { op: "add", path: "/todos/-", value: { id: "c", done: false } },
    { op: "replace", path: "/todos/0/done", value: true },
    { op: "remove", path: "/todos/1" },
    { op: "move", from: "/todos/1", path: "/todos/0" },
    { op: "copy", from: "/note", path: "/title" },
    { op: "test", path: "/title", value: "n" },
    { op: "add", path: "/a~1b", value: 1 },
  ]);
  assert.deepEqual(after, {
    todos: [{ id: "c", done: false }, { id: "a", done: true }], note: "n", title: "n", "a/b": 1,
  });
  assert.deepEqual(START, before);
  assert.notEqual(after.todos, START.todos);
});

test("applyOps shares what it does not change", () => {
  const state = { a: { x: 1 }, b: { y: 2 } };
  const after = applyOps(state, [{ op: "replace", path: "/a/x", value: 3 }]);
  assert.equal(after.b, state.b);
  assert.deepEqual(state.a, { x: 1 });
});

test("applyOps replaces the whole document at the root path", () => {
  assert.deepEqual(applyOps({ a: 1 }, [{ op: "replace", path: "", value: [1] }]), [1]);
  assert.deepEqual(applyOps({ a: 1 }, [{ op: "add", path: "", value: { b: 2 } }]), { b: 2 });
});

for (const [name, op, words] of [
  ["a missing key", { op: "replace", path: "/todos/0/nope", value: 1 }, '"/todos/0/nope": the path does not exist'],
  ["an index past the end", { op: "remove", path: "/todos/2" }, '"/todos/2": index 2 is out of range'],
  ["an add past the end", { op: "add", path: "/todos/3", value: 1 }, "index 3 is out of range"],
  ["a missing parent", { op: "add", path: "/x/y", value: 1 }, '"/x/y": the path does not exist'],
  ["a failed test", { op: "test", path: "/note", value: "m" }, 'the value is not "m"'],
  ["a bad index", { op: "replace", path: "/todos/01", value: 1 }, "is not an array index"],
  ["a move into itself", { op: "move", from: "/todos", path: "/todos/0" }, "cannot move into itself"],
  ["an unknown op", { op: "jump", path: "/note" }, "unknown operation"],
]) {
  test(`applyOps names the path of ${name}`, () => {
    assert.throws(() => applyOps(START, [op]), (e) => e instanceof PatchError && e.message.includes(words) && e.path === op.path);
  });
}

test("diffState gives ops that turn one state into the other", () => {
  const cases = [
    [START, { ...START, note: "m" }],
    [START, { todos: [...START.todos, { id: "c", done: false }] }],
    [START, { ...START, todos: [START.todos[1]] }],
    [START, { ...START, todos: [{ id: "b", done: true }, { id: "a", done: false }] }],
    [START, { ...START, todos: [{ id: "a", done: true }, { id: "b", done: true }] }],
    [{ a: [1, 2, 3, 4] }, { a: [1, 9, 8, 7, 4] }],
    [{ a: 1 }, { b: { "x/y": 2 } }],
    [[1], { a: 1 }],
  ];
  for (const [before, after] of cases) {
    assert.deepEqual(applyOps(before, diffState(before, after)), after);
  }
  assert.deepEqual(diffState(START, structuredClone(START)), []);
  assert.deepEqual(diffState(START, { ...START, todos: [...START.todos, { id: "c" }] }),
                   [{ op: "add", path: "/todos/2", value: { id: "c" } }]);
});

test("stripOldStateParts keeps the last state part and the last version part only", () => {
  const big = { todos: ["x".repeat(1000)] };
  const messages = [
    { id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] },
    { id: "a1", role: "assistant", parts: [{ type: "text", text: "ok" }, { type: "data-state", id: "state", data: big },
                                          { type: "data-state-version", id: "state-version", data: { version: 2 } }] },
    { id: "u2", role: "user", parts: [{ type: "text", text: "again" }] },
    { id: "a2", role: "assistant", parts: [{ type: "data-state", id: "state", data: { todos: [] } },
                                          { type: "data-state-version", id: "state-version", data: { version: 3 } }] },
    { id: "u3", role: "user", parts: [{ type: "text", text: "more" }] },
    { id: "a3", role: "assistant", parts: [{ type: "data-state-version", id: "state-version", data: { version: 4 } },
                                          { type: "text", text: "same" }] },
  ];
  const out = stripOldStateParts(messages);
  assert.deepEqual(out[1].parts, [{ type: "text", text: "ok" }]);
  assert.deepEqual(out[3].parts, [{ type: "data-state", id: "state", data: { todos: [] } }]);
  assert.equal(out[5], messages[5]);
  assert.equal(out[0], messages[0]);
  assert.equal(messages[1].parts.length, 3); // the chat's own messages are left as they are
});

test("diffState keeps an item changed in place apart from items that only took its place", () => {
  const todo = (id, done = false) => ({ id, text: `t ${id}`, done });
  const before = { todos: [todo("a", true), todo("b"), todo("c"), todo("d")] };
  const after = { todos: [todo("b"), todo("x"), todo("c", true), todo("d"), todo("e")] };
  const ops = diffState(before, after);
  assert.deepEqual(applyOps(before, ops), after);
  assert.deepEqual(ops, [
    { op: "remove", path: "/todos/0" },
    { op: "add", path: "/todos/1", value: todo("x") },
    { op: "replace", path: "/todos/2/done", value: true },
    { op: "add", path: "/todos/4", value: todo("e") },
  ]);
  // a todo moved to the front: removed and added, not every todo rewritten field by field
  const moved = { todos: [todo("d"), todo("a", true), todo("b"), todo("c")] };
  assert.deepEqual(diffState(before, moved), [
    { op: "add", path: "/todos/0", value: todo("d") }, { op: "remove", path: "/todos/4" },
  ]);
  assert.deepEqual(applyOps(before, diffState(before, moved)), moved);
});

test("rebaseOps moves an edit past what others changed meanwhile", () => {
  const todo = (id, done = false) => ({ id, done });
  const S = { todos: ["a", "b", "c", "d"].map((id) => todo(id)) };
  const T = { todos: ["b", "c", "d", "e"].map((id) => todo(id)) }; // a removed, e added
  const through = diffState(S, T);
  assert.deepEqual(rebaseOps([{ op: "replace", path: "/todos/2/done", value: true }], through, S),
                   [{ op: "replace", path: "/todos/1/done", value: true }]);
  assert.equal(rebaseOps([{ op: "replace", path: "/todos/0/done", value: true }], through, S), null);
  assert.deepEqual(rebaseOps([{ op: "remove", path: "/todos/3" }, { op: "add", path: "/todos/0", value: todo("d") }], through, S),
                   [{ op: "remove", path: "/todos/2" }, { op: "add", path: "/todos/0", value: todo("d") }]);
  // both wrote one place: the edit's write stays
  const U = { todos: [todo("a", true), ...S.todos.slice(1)] };
  assert.deepEqual(rebaseOps([{ op: "replace", path: "/todos/0/done", value: false }], diffState(S, U), S),
                   [{ op: "replace", path: "/todos/0/done", value: false }]);
  // two inserts at one index: the edit's goes after the other's
  const V = { todos: [todo("x"), ...S.todos] };
  assert.deepEqual(rebaseOps([{ op: "add", path: "/todos/0", value: todo("y") }, { op: "replace", path: "/todos/1/done", value: true }], diffState(S, V), S),
                   [{ op: "add", path: "/todos/1", value: todo("y") }, { op: "replace", path: "/todos/2/done", value: true }]);
  for (const [s, t, ops] of [[S, T, [{ op: "add", path: "/todos/-", value: 1 }]], [S, V, [{ op: "remove", path: "/todos/3" }]]]) {
    const moved = rebaseOps(ops, diffState(s, t), s);
    assert.ok(moved);
    applyOps(t, moved);
  }
});
