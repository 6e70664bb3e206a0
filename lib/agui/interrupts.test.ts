import { InterruptSchema } from "@ag-ui/core/schemas";
import { isCommand } from "@langchain/langgraph";
import { describeContract } from "@/e2e/support/agui-fixtures/check-events";
import { loadFixture } from "@/e2e/support/agui-fixtures/load-fixture";
import { answerJsonSchema, parseInterruptPayload } from "@/lib/contract/questions";
import { finishInputFromState, resumeToCommand, stateSnapshot, toAguiInterrupt } from "./index";

describe("toAguiInterrupt", () => {
  test("a payload of our contract: its action, title and answer schema, raw payload kept", async () => {
    const [raw] = (await loadFixture("run-to-interrupt")).final.interrupts;
    if (!raw) throw new Error("fixture has no interrupt");
    const interrupt = toAguiInterrupt(raw, describeContract);
    const parsed = parseInterruptPayload(raw.value);
    if (!parsed.ok) throw new Error("fixture payload must parse");
    expect(interrupt).toEqual({
      id: raw.id,
      reason: "refund_approval",
      message: "Refund EUR 49.00 for order A-1001?",
      responseSchema: answerJsonSchema(parsed.payload),
      metadata: { payload: raw.value },
    });
    expect(InterruptSchema.parse(interrupt)).toEqual(interrupt);
  });

  test("anything else: reason unknown, no schema, raw payload kept", () => {
    const value = { question: "Proceed?", when: new Date("2025-01-02T03:04:05.000Z") };
    const interrupt = toAguiInterrupt({ id: "i1", value });
    expect(interrupt).toEqual({
      id: "i1",
      reason: "unknown",
      metadata: { payload: { question: "Proceed?", when: "2025-01-02T03:04:05.000Z" } },
    });
    expect(InterruptSchema.parse(interrupt)).toEqual(interrupt);
    expect(toAguiInterrupt({ id: "i2" })).toEqual({
      id: "i2",
      reason: "unknown",
      metadata: { payload: null },
    });
  });

  test("an unparseable payload keeps the schema the graph declared to LangGraph", () => {
    const schema = { type: "object", properties: { ok: { type: "boolean" } } };
    expect(toAguiInterrupt({ id: "i3", value: "ok?", response_schema: schema })).toMatchObject({
      reason: "unknown",
      responseSchema: schema,
    });
  });

  test("throws on an interrupt without an id", () => {
    expect(() => toAguiInterrupt({ value: {} })).toThrow(/interrupt has no id/);
  });
});

describe("resumeToCommand", () => {
  test("maps each entry by interrupt id: resolved → payload, cancelled → { cancelled: true }", () => {
    const command = resumeToCommand([
      { interruptId: "i1", status: "resolved", payload: { decision: "approve" } },
      { interruptId: "i2", status: "cancelled", payload: { ignored: true } },
      { interruptId: "i3", status: "resolved" },
    ]);
    expect(isCommand(command)).toBe(true);
    expect(command.resume).toEqual({ i1: { decision: "approve" }, i2: { cancelled: true }, i3: null });
  });

  test("rejects an empty resume and an interrupt answered twice", () => {
    expect(() => resumeToCommand([])).toThrow(/no entries/);
    const twice = [
      { interruptId: "i1", status: "resolved" as const, payload: 1 },
      { interruptId: "i1", status: "cancelled" as const },
    ];
    expect(() => resumeToCommand(twice)).toThrow(/twice/);
  });
});

describe("final state", () => {
  test("finishInputFromState reads interrupts from tasks, not next", () => {
    const interrupts = [
      { id: "i1", value: 1 },
      { id: "i2", value: 2 },
    ];
    const state = {
      values: { messages: [], n: 1 },
      next: [],
      tasks: [{ interrupts: [interrupts[0]!] }, { interrupts: [interrupts[1]!] }, {}],
    };
    expect(finishInputFromState(state)).toEqual({ values: state.values, messages: [], interrupts });
    expect(() => finishInputFromState({ values: { messages: "x" }, tasks: [] })).toThrow(/not an array/);
  });

  test("stateSnapshot drops messages and makes the rest JSON-safe", () => {
    const values = {
      messages: [1],
      at: new Date(0),
      big: 10n,
      gone: undefined,
      fn: () => 1,
      nested: { a: [1, undefined] },
    };
    expect(stateSnapshot(values)).toEqual({
      at: "1970-01-01T00:00:00.000Z",
      big: "10",
      nested: { a: [1, null] },
    });
  });
});
