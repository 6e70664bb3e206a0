import { EventType, type RunAgentInput } from "@ag-ui/core";
import { AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { checkEvents, ofType, testClock, typesOf } from "@/e2e/support/agui-fixtures/check-events";
import { createAguiMapper, LANGGRAPH_CUSTOM_EVENT } from "./index";

const T = EventType;

describe("createAguiMapper lifecycle", () => {
  const ctx = { threadId: "t", runId: "r", now: testClock() };
  const meta = { langgraph_checkpoint_ns: "agent:task-1" };

  test("refuses events outside a running run, and an input of another run", () => {
    const mapper = createAguiMapper(ctx);
    expect(() => mapper.push("updates", {})).toThrow(/new/);
    expect(() => createAguiMapper(ctx).start({ threadId: "t", runId: "other" } as RunAgentInput)).toThrow();
    mapper.start();
    expect(() => mapper.start()).toThrow(/running/);
    mapper.finish({ values: {}, messages: [], interrupts: [] });
    expect(() => mapper.push("updates", {})).toThrow(/ended/);
    expect(() => mapper.finish({ values: {}, messages: [], interrupts: [] })).toThrow(/ended/);
    expect(() => mapper.fail({ code: "internal", message: "late" })).toThrow(/ended/);
  });

  test("a finish whose events were never written can still end with RUN_ERROR; a written one cannot", () => {
    const mapper = createAguiMapper(ctx);
    mapper.start();
    expect(() => mapper.finishNotWritten()).toThrow(/running/);
    mapper.finish({ values: {}, messages: [], interrupts: [] });
    mapper.finishNotWritten();
    expect(typesOf(mapper.fail({ code: "internal:run_failed", message: "the end was not written" }))).toEqual(
      [T.RUN_ERROR],
    );
    expect(() => mapper.finishNotWritten()).toThrow(/ended/);
    expect(() => mapper.fail({ code: "internal", message: "twice" })).toThrow(/ended/);
  });

  test("fail() ends a run with RUN_ERROR while a message, tool call and step are open", async () => {
    const mapper = createAguiMapper(ctx);
    const chunk = new AIMessageChunk({
      id: "m1",
      content: "Half a sen",
      tool_call_chunks: [{ id: "c1", name: "lookup", args: '{"or', index: 0, type: "tool_call_chunk" }],
    });
    const events = [
      ...mapper.start(),
      ...mapper.push("tasks", { id: "task-1", name: "agent", input: {}, triggers: [] }),
      ...mapper.push("messages", [chunk, meta]),
      ...mapper.fail({ code: "internal:run", message: "model timed out" }),
    ];
    await checkEvents(events);
    expect(events.at(-1)).toMatchObject({
      type: T.RUN_ERROR,
      code: "internal:run",
      message: "model timed out",
    });
    expect(typesOf(events).filter((t) => t.endsWith("_END") || t === T.STEP_FINISHED)).toEqual([]);
  });

  test("cancel() ends a stopped run with RUN_FINISHED, AG-UI 1.0's cancelled outcome, what was open closed", async () => {
    const mapper = createAguiMapper(ctx);
    const chunk = new AIMessageChunk({
      id: "m1",
      content: "Half a sen",
      tool_call_chunks: [{ id: "c1", name: "lookup", args: '{"or', index: 0, type: "tool_call_chunk" }],
    });
    const stop = { code: "conflict:run_cancelled", message: "Stopped by ann@example.com." };
    const events = [
      ...mapper.start(),
      ...mapper.push("tasks", { id: "task-1", name: "agent", input: {}, triggers: [] }),
      ...mapper.push("messages", [chunk, meta]),
      ...mapper.cancel(stop),
    ];
    // The client's own verifier accepts it: nothing is left open at the end.
    await checkEvents(events);
    expect(events.at(-1)).toMatchObject({
      type: T.RUN_FINISHED,
      threadId: "t",
      runId: "r",
      outcome: { type: "cancelled" },
      metadata: { stop },
    });
    expect(typesOf(events)).not.toContain(T.RUN_ERROR);
    expect(() => mapper.cancel(stop)).toThrow(/ended/);
    expect(() => mapper.fail(stop)).toThrow(/ended/);
  });

  test("fail() before start() is a lone RUN_ERROR, which AG-UI accepts as a first event", async () => {
    const events = createAguiMapper(ctx).fail({ code: "bad_request:run", message: "invalid input" });
    await checkEvents(events);
    expect(typesOf(events)).toEqual([T.RUN_ERROR]);
  });

  test("finish() is all or nothing: an id-less message throws, and fail() can still end the run", async () => {
    const mapper = createAguiMapper(ctx);
    const started = mapper.start();
    const streamed = mapper.push("messages", [new AIMessageChunk({ id: "m1", content: "hi" }), meta]);
    const bad = { values: {}, messages: [new HumanMessage("no id")], interrupts: [] };
    expect(() => mapper.finish(bad)).toThrow(/no id/);
    const failed = mapper.fail({ code: "internal:run", message: "could not map the final state" });
    await checkEvents([...started, ...streamed, ...failed]);
  });

  test("custom items become CUSTOM events; updates and other modes emit nothing", async () => {
    const mapper = createAguiMapper(ctx);
    const events = [
      ...mapper.start(),
      ...mapper.push("custom", { name: "progress", value: { pct: 50 } }),
      ...mapper.push("custom", "plain text"),
      ...mapper.push("custom", { name: "no-value" }),
      ...mapper.push("updates", { agent: { messages: [] } }),
      ...mapper.push("values", {}),
      ...mapper.finish({ values: {}, messages: [], interrupts: [] }),
    ];
    await checkEvents(events);
    expect(ofType(events, T.CUSTOM).map(({ name, value }) => ({ name, value }))).toEqual([
      { name: "progress", value: { pct: 50 } },
      { name: LANGGRAPH_CUSTOM_EVENT, value: "plain text" },
      { name: "no-value", value: null },
    ]);
  });

  test("a malformed stream item fails loudly", () => {
    const mapper = createAguiMapper(ctx);
    mapper.start();
    expect(() => mapper.push("messages", { not: "a tuple" })).toThrow(/messages/);
    expect(() => mapper.push("tasks", { id: "x" })).toThrow(/tasks/);
  });

  test("stamps every event with the injected clock", () => {
    const mapper = createAguiMapper({ threadId: "t", runId: "r", now: () => 42 });
    const events = [...mapper.start(), ...mapper.finish({ values: {}, messages: [], interrupts: [] })];
    expect(events.every((e) => e.timestamp === 42)).toBe(true);
  });
});
