import { EventType } from "@ag-ui/core";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { checkEvents, ofType, typesOf } from "@/e2e/support/agui-fixtures/check-events";
import { chunk, harness, ns, tcc } from "@/e2e/support/agui-fixtures/harness";
import type { AguiEvent } from "./index";

const T = EventType;
describe("messages mode", () => {
  test("the check harness rejects what AG-UI's verifier rejects", async () => {
    const content: AguiEvent = { type: T.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "x" };
    await expect(checkEvents([{ type: T.RUN_STARTED, threadId: "t", runId: "r" }, content])).rejects.toThrow(
      /No active text message/,
    );
  });

  test("skips empty deltas and opens text once per message", async () => {
    const h = harness();
    h.task("task-1", "agent");
    for (const content of ["", "Hel", "", "lo"])
      h.push("messages", [chunk({ id: "m1", content }), ns("agent", "task-1")]);
    h.done("task-1", "agent");
    h.finish();
    await checkEvents(h.events);
    expect(ofType(h.events, T.TEXT_MESSAGE_START)).toHaveLength(1);
    expect(ofType(h.events, T.TEXT_MESSAGE_CONTENT).map((e) => e.delta)).toEqual(["Hel", "lo"]);
  });

  test("continues a tool call by its index, and closes the message when its tool result arrives", async () => {
    const h = harness();
    h.task("task-1", "agent");
    const meta = ns("agent", "task-1");
    h.push("messages", [
      chunk({ id: "m1", content: "", tool_call_chunks: [tcc({ id: "c1", name: "a", index: 0 })] }),
      meta,
    ]);
    h.push("messages", [
      chunk({ id: "m1", content: "", tool_call_chunks: [tcc({ id: "c2", name: "b", index: 1 })] }),
      meta,
    ]);
    h.push("messages", [
      chunk({ id: "m1", content: "", tool_call_chunks: [tcc({ args: '{"x":1}', index: 0 })] }),
      meta,
    ]);
    h.push("messages", [
      chunk({ id: "m1", content: "", tool_call_chunks: [tcc({ args: "{}", index: 1 })] }),
      meta,
    ]);
    const result = h.push("messages", [
      new ToolMessage({ id: "t1", tool_call_id: "c1", content: "ok" }),
      meta,
    ]);
    expect(typesOf(result)).toEqual([T.TOOL_CALL_END, T.TOOL_CALL_END, T.TOOL_CALL_RESULT]);
    h.done("task-1", "agent");
    h.finish();
    await checkEvents(h.events);
    expect(ofType(h.events, T.TOOL_CALL_ARGS).map((e) => [e.toolCallId, e.delta])).toEqual([
      ["c1", '{"x":1}'],
      ["c2", "{}"],
    ]);
  });

  test("emits a whole AIMessage complete, with its tool calls under it, and never twice", async () => {
    const h = harness();
    const message = new AIMessage({
      id: "a1",
      content: "Checking.",
      tool_calls: [{ id: "c1", name: "check", args: { id: 7 }, type: "tool_call" }],
    });
    h.push("messages", [message, {}]);
    expect(h.push("messages", [message, {}])).toEqual([]);
    h.push("messages", [
      new ToolMessage({ id: "t1", tool_call_id: "c1", content: [{ type: "text", text: "ok" }] }),
      {},
    ]);
    expect(
      h.push("messages", [new ToolMessage({ id: "t1", tool_call_id: "c1", content: "ok" }), {}]),
    ).toEqual([]);
    h.finish();
    await checkEvents(h.events);
    expect(typesOf(h.events).slice(1, 8)).toEqual([
      T.TEXT_MESSAGE_START,
      T.TEXT_MESSAGE_CONTENT,
      T.TEXT_MESSAGE_END,
      T.TOOL_CALL_START,
      T.TOOL_CALL_ARGS,
      T.TOOL_CALL_END,
      T.TOOL_CALL_RESULT,
    ]);
    expect(ofType(h.events, T.TOOL_CALL_START)[0]).toMatchObject({
      parentMessageId: "a1",
      toolCallName: "check",
    });
    expect(ofType(h.events, T.TOOL_CALL_RESULT)[0]).toMatchObject({ content: "ok", role: "tool" });
  });

  test("a whole message repeating a streamed one adds only the tool calls not yet streamed", async () => {
    const h = harness();
    h.task("task-1", "agent");
    h.push("messages", [chunk({ id: "m1", content: "Hi" }), ns("agent", "task-1")]);
    const whole = new AIMessage({ id: "m1", content: "Hi", tool_calls: [{ id: "c9", name: "x", args: {} }] });
    expect(typesOf(h.push("messages", [whole, ns("agent", "task-1")]))).toEqual([
      T.TOOL_CALL_START,
      T.TOOL_CALL_ARGS,
      T.TOOL_CALL_END,
    ]);
    h.done("task-1", "agent");
    h.finish();
    await checkEvents(h.events);
  });

  test("a chunk arriving after its task finished is emitted already closed", async () => {
    const h = harness();
    h.task("task-1", "agent");
    h.push("messages", [chunk({ id: "m1", content: "early " }), ns("agent", "task-1")]);
    h.done("task-1", "agent");
    const late = h.push("messages", [chunk({ id: "m1", content: "late" }), ns("agent", "task-1")]);
    expect(typesOf(late)).toEqual([T.TEXT_MESSAGE_START, T.TEXT_MESSAGE_CONTENT, T.TEXT_MESSAGE_END]);
    h.finish();
    await checkEvents(h.events);
  });

  test("ignores echoed human and system messages", () => {
    const h = harness();
    expect(h.push("messages", [new HumanMessage({ id: "h1", content: "hi" }), {}])).toEqual([]);
    expect(h.push("messages", [new SystemMessage({ id: "s1", content: "be nice" }), {}])).toEqual([]);
  });

  test("fails loudly on a message or tool call without an id", () => {
    const h = harness();
    expect(() => h.push("messages", [chunk({ content: "x" }), {}])).toThrow(/AIMessageChunk has no id/);
    expect(() => h.push("messages", [new AIMessage({ content: "x" }), {}])).toThrow(/AIMessage has no id/);
    const noCallId = new AIMessage({ id: "a", content: "", tool_calls: [{ name: "f", args: {} }] });
    expect(() => h.push("messages", [noCallId, {}])).toThrow(/tool call "f"/);
    const orphan = chunk({ id: "m2", content: "", tool_call_chunks: [tcc({ args: "{}", index: 3 })] });
    expect(() => h.push("messages", [orphan, {}])).toThrow(/index 3/);
  });
});
