import { EventType } from "@ag-ui/core";
import { checkEvents, typesOf } from "@/e2e/support/agui-fixtures/check-events";
import { chunk, harness, ns } from "@/e2e/support/agui-fixtures/harness";

const T = EventType;

describe("tasks mode", () => {
  test("balances steps across parallel tasks of one node and ignores internal tasks", async () => {
    const h = harness();
    h.task("__start__-1", "__start__");
    h.task("a", "fanout");
    h.task("b", "fanout");
    h.done("a", "fanout");
    h.done("b", "fanout");
    h.done("__start__-1", "__start__");
    h.task("c", "other");
    h.finish();
    await checkEvents(h.events);
    expect(h.events.filter((e) => e.type === T.STEP_STARTED || e.type === T.STEP_FINISHED)).toMatchObject([
      { type: T.STEP_STARTED, stepName: "fanout" },
      { type: T.STEP_FINISHED, stepName: "fanout" },
      { type: T.STEP_STARTED, stepName: "other" },
      { type: T.STEP_FINISHED, stepName: "other" }, // closed by finish(): the task reported no result
    ]);
  });

  test("the same node in a later superstep is a new step", async () => {
    const h = harness();
    h.task("a1", "agent");
    h.done("a1", "agent");
    h.task("a2", "agent");
    h.done("a2", "agent");
    h.finish();
    await checkEvents(h.events);
    expect(typesOf(h.events).filter((t) => t.startsWith("STEP_"))).toEqual([
      T.STEP_STARTED,
      T.STEP_FINISHED,
      T.STEP_STARTED,
      T.STEP_FINISHED,
    ]);
  });

  test("closes a step's open text before STEP_FINISHED", () => {
    const h = harness();
    h.task("task-1", "agent");
    h.push("messages", [chunk({ id: "m1", content: "Hi" }), ns("agent", "task-1")]);
    expect(typesOf(h.done("task-1", "agent"))).toEqual([T.TEXT_MESSAGE_END, T.STEP_FINISHED]);
  });
});
