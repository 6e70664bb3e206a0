import { Annotation, END, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { checkEvents, testClock } from "@/e2e/support/agui-fixtures/check-events";
import { loadFixture } from "@/e2e/support/agui-fixtures/load-fixture";
import { runToyGraph, type ToyRun } from "@/e2e/support/agui-fixtures/toy-graph";
import {
  type AguiEvent,
  CANCELLED_RESUME,
  createAguiMapper,
  isCancelledResume,
  resumeToCommand,
} from "./index";

function mapRun(run: ToyRun): AguiEvent[] {
  const mapper = createAguiMapper({ threadId: run.threadId, runId: "run", now: testClock() });
  return [
    ...mapper.start(),
    ...run.items.flatMap(([mode, chunk]) => mapper.push(mode, chunk)),
    ...mapper.finish(run.final),
  ];
}

/** Interrupt ids hash the checkpoint, which differs between recordings; everything else must match exactly. */
function normalized(run: ToyRun): unknown {
  let text = JSON.stringify(mapRun(run));
  for (const [i, interrupt] of run.final.interrupts.entries())
    text = text.replaceAll(interrupt.id ?? "", `<i${i}>`);
  return JSON.parse(text);
}

/** The shape of the raw stream: mode plus task name or message class, per item. */
const streamShape = (run: ToyRun) =>
  run.items.map(([mode, chunk]) => {
    const item = (Array.isArray(chunk) ? chunk[0] : chunk) as {
      name?: string;
      constructor: { name: string };
    };
    return `${mode}:${mode === "tasks" ? item.name : item.constructor.name}`;
  });

describe("the live toy graph (fixture drift guard)", () => {
  test("streams the same items, and maps to the same events, as the recorded fixtures", async () => {
    const live = await runToyGraph();
    const recorded = {
      interrupted: await loadFixture("run-to-interrupt"),
      resumed: await loadFixture("resume-to-success"),
    };
    for (const key of ["interrupted", "resumed"] as const) {
      expect(streamShape(live[key])).toEqual(streamShape(recorded[key]));
      expect(normalized(live[key])).toEqual(normalized(recorded[key]));
      await checkEvents(mapRun(live[key]));
    }
  });

  test("a cancelled resume reaches the node as CANCELLED_RESUME", async () => {
    const seen: unknown[] = [];
    const State = Annotation.Root({ outcome: Annotation<string>() });
    const graph = new StateGraph(State)
      .addNode("ask", async () => {
        const answer = interrupt({ action: "input_text", title: "Order number?", question: "Which order?" });
        seen.push(answer);
        return { outcome: isCancelledResume(answer) ? "skipped" : "answered" };
      })
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "cancel" } };
    await graph.invoke({}, config);
    const [pending] = (await graph.getState(config)).tasks.flatMap((task) => task.interrupts);
    const command = resumeToCommand([{ interruptId: pending?.id ?? "", status: "cancelled" }]);
    expect(await graph.invoke(command, config)).toEqual({ outcome: "skipped" });
    expect(seen).toEqual([CANCELLED_RESUME]);
  });
});
