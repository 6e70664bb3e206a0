import { EventType, type RunAgentInput } from "@ag-ui/core";
import {
  checkEvents,
  describeContract,
  ofType,
  testClock,
  typesOf,
} from "@/e2e/support/agui-fixtures/check-events";
import { type FixtureName, loadFixture } from "@/e2e/support/agui-fixtures/load-fixture";
import type { ToyRun } from "@/e2e/support/agui-fixtures/toy-graph";
import { type AguiEvent, createAguiMapper } from "./index";

const T = EventType;

function mapRun(run: ToyRun, runId: string, input?: RunAgentInput): AguiEvent[] {
  const mapper = createAguiMapper({
    threadId: run.threadId,
    runId,
    now: testClock(),
    describeInterrupt: describeContract,
  });
  return [
    ...mapper.start(input),
    ...run.items.flatMap(([mode, chunk]) => mapper.push(mode, chunk)),
    ...mapper.finish(run.final),
  ];
}

const mapFixture = async (name: FixtureName, runId = `run-${name}`) => mapRun(await loadFixture(name), runId);

describe("createAguiMapper on recorded runs", () => {
  test("maps a run to its interrupt: steps, streamed text and tool calls, snapshots, RUN_FINISHED interrupt", async () => {
    const run = await loadFixture("run-to-interrupt");
    const events = mapRun(run, "run-1");
    await checkEvents(events);
    expect(typesOf(events)).toEqual([
      T.RUN_STARTED,
      T.STEP_STARTED, // agent: streamed text, then a streamed tool call
      T.TEXT_MESSAGE_START,
      T.TEXT_MESSAGE_CONTENT,
      T.TEXT_MESSAGE_CONTENT,
      T.TOOL_CALL_START,
      T.TOOL_CALL_ARGS,
      T.TOOL_CALL_ARGS,
      T.TEXT_MESSAGE_END,
      T.TOOL_CALL_END,
      T.STEP_FINISHED,
      T.STEP_STARTED, // tools: the tool result
      T.TOOL_CALL_RESULT,
      T.STEP_FINISHED,
      T.STEP_STARTED, // policy: a custom event, a whole AIMessage with a tool call, its result
      T.CUSTOM,
      T.TEXT_MESSAGE_START,
      T.TEXT_MESSAGE_CONTENT,
      T.TEXT_MESSAGE_END,
      T.TOOL_CALL_START,
      T.TOOL_CALL_ARGS,
      T.TOOL_CALL_END,
      T.TOOL_CALL_RESULT,
      T.STEP_FINISHED,
      T.STEP_STARTED, // review: interrupts
      T.STEP_FINISHED,
      T.MESSAGES_SNAPSHOT,
      T.STATE_SNAPSHOT,
      T.RUN_FINISHED,
    ]);
    expect(ofType(events, T.STEP_STARTED).map((e) => e.stepName)).toEqual([
      "agent",
      "tools",
      "policy",
      "review",
    ]);
    expect(ofType(events, T.TEXT_MESSAGE_CONTENT).map((e) => e.delta)).toEqual([
      "Let me look up ",
      "order A-1001.",
      "Checking the refund policy.",
    ]);
    expect(ofType(events, T.TOOL_CALL_START)).toMatchObject([
      { toolCallId: "call_lookup", toolCallName: "lookup_order", parentMessageId: "chatcmpl-toy-1" },
      { toolCallId: "call_policy", toolCallName: "check_policy", parentMessageId: "ai-policy-1" },
    ]);
    const args = ofType(events, T.TOOL_CALL_ARGS).filter((e) => e.toolCallId === "call_lookup");
    expect(JSON.parse(args.map((e) => e.delta).join(""))).toEqual({ orderId: "A-1001" });
    expect(ofType(events, T.TOOL_CALL_RESULT)).toMatchObject([
      { messageId: "tool-lookup-1", toolCallId: "call_lookup", role: "tool" },
      { messageId: "tool-policy-1", toolCallId: "call_policy", content: "needs approval" },
    ]);
    expect(ofType(events, T.CUSTOM)).toMatchObject([{ name: "policy_checked", value: { findings: 1 } }]);

    const [snapshot] = ofType(events, T.MESSAGES_SNAPSHOT);
    expect(snapshot?.messages.map((m) => `${m.role}:${m.id}`)).toEqual([
      "user:human-1",
      "assistant:chatcmpl-toy-1",
      "tool:tool-lookup-1",
      "assistant:ai-policy-1",
      "tool:tool-policy-1",
    ]);
    expect(ofType(events, T.STATE_SNAPSHOT)[0]?.snapshot).toEqual({ decision: null });

    const finished = events.at(-1);
    const interruptId = run.final.interrupts[0]?.id;
    expect(interruptId).toMatch(/^[0-9a-f]{32}$/);
    expect(finished).toMatchObject({
      type: T.RUN_FINISHED,
      threadId: "toy-thread",
      runId: "run-1",
      outcome: {
        type: "interrupt",
        interrupts: [
          { id: interruptId, reason: "refund_approval", message: "Refund EUR 49.00 for order A-1001?" },
        ],
      },
    });
  });

  test("maps the resumed run to success", async () => {
    const events = await mapFixture("resume-to-success");
    await checkEvents(events);
    expect(typesOf(events)).toEqual([
      T.RUN_STARTED,
      T.STEP_STARTED,
      T.STEP_FINISHED,
      T.STEP_STARTED,
      T.TEXT_MESSAGE_START,
      T.TEXT_MESSAGE_CONTENT,
      T.TEXT_MESSAGE_CONTENT,
      T.TEXT_MESSAGE_END,
      T.STEP_FINISHED,
      T.MESSAGES_SNAPSHOT,
      T.STATE_SNAPSHOT,
      T.RUN_FINISHED,
    ]);
    expect(ofType(events, T.STEP_STARTED).map((e) => e.stepName)).toEqual(["review", "finalize"]);
    const messages = ofType(events, T.MESSAGES_SNAPSHOT)[0]?.messages ?? [];
    expect(messages.at(-1)).toEqual({
      id: "chatcmpl-toy-2",
      role: "assistant",
      content: "Refund approved: EUR 49.00 goes back to your card.",
    });
    expect(ofType(events, T.STATE_SNAPSHOT)[0]?.snapshot).toEqual({ decision: { decision: "approve" } });
    expect(events.at(-1)).toMatchObject({ type: T.RUN_FINISHED, outcome: { type: "success" } });
  });

  test("both runs verify as one thread's event log, replayed in order", async () => {
    const log = [...(await mapFixture("run-to-interrupt")), ...(await mapFixture("resume-to-success"))];
    await checkEvents(log);
  });

  test("never puts a message, tool call or tool result on the wire twice", async () => {
    for (const name of ["run-to-interrupt", "resume-to-success"] as const) {
      const events = await mapFixture(name);
      const once = (ids: string[]) => expect(new Set(ids).size).toBe(ids.length);
      once(ofType(events, T.TEXT_MESSAGE_START).map((e) => e.messageId));
      once(ofType(events, T.TOOL_CALL_START).map((e) => e.toolCallId));
      once(ofType(events, T.TOOL_CALL_RESULT).map((e) => e.messageId));
    }
  });

  test("is deterministic given the same items and clock", async () => {
    expect(await mapFixture("run-to-interrupt", "r")).toEqual(await mapFixture("run-to-interrupt", "r"));
  });

  test("echoes the RunAgentInput in RUN_STARTED", async () => {
    const run = await loadFixture("run-to-interrupt");
    const input: RunAgentInput = {
      threadId: run.threadId,
      runId: "run-1",
      parentRunId: "run-0",
      protocolVersion: "1.0",
      messages: [{ id: "human-1", role: "user", content: "I want a refund" }],
      tools: [],
      context: [],
    };
    const events = mapRun(run, "run-1", input);
    await checkEvents(events);
    expect(events[0]).toMatchObject({
      type: T.RUN_STARTED,
      protocolVersion: "1.0",
      parentRunId: "run-0",
      input,
    });
  });
});
