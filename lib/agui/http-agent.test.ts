import { buildResumeArray, HttpAgent } from "@ag-ui/client";
import type { RunAgentInput } from "@ag-ui/core";
import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { describeContract, testClock } from "@/e2e/support/agui-fixtures/check-events";
import { loadFixture } from "@/e2e/support/agui-fixtures/load-fixture";
import type { ToyRun } from "@/e2e/support/agui-fixtures/toy-graph";
import { createAguiMapper, encodeSse, resumeToCommand } from "./index";

/** Serves the recorded runs, in order, as our SSE stream would. */
function fakeServer(runs: ToyRun[]) {
  const requests: RunAgentInput[] = [];
  let seq = 0;
  const fetch = async (_url: string, init: RequestInit) => {
    const input = RunAgentInputSchema.parse(JSON.parse(String(init.body))) as RunAgentInput;
    const run = runs[requests.length];
    requests.push(input);
    if (!run) throw new Error("no more recorded runs");
    const mapper = createAguiMapper({
      threadId: input.threadId,
      runId: input.runId,
      now: testClock(),
      describeInterrupt: describeContract,
    });
    const events = [
      ...mapper.start(input),
      ...run.items.flatMap(([mode, chunk]) => mapper.push(mode, chunk)),
      ...mapper.finish(run.final),
    ];
    const body = events.map((event) => encodeSse(event, ++seq)).join("");
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  };
  return { fetch, requests };
}

test("an unmodified HttpAgent reads our stream, pauses on the interrupt, and resumes through resumeToCommand", async () => {
  const interrupted = await loadFixture("run-to-interrupt");
  const resumed = await loadFixture("resume-to-success");
  const interruptId = interrupted.final.interrupts[0]?.id ?? "";
  const server = fakeServer([interrupted, resumed]);
  const warn = vi.spyOn(console, "warn");
  // The browser sends the operator's message itself, so it holds it before the run starts; the snapshot then only
  // updates and appends (a message the client never saw is appended after the ones it has).
  const agent = new HttpAgent({
    url: "http://test/api/threads/toy-thread/runs",
    threadId: "toy-thread",
    initialMessages: [
      { id: "human-1", role: "user", content: "I want a refund for order A-1001, it broke." },
    ],
    ...server,
  });

  await agent.runAgent({ runId: "run-1" });
  expect(server.requests[0]?.messages.map((m) => m.id)).toEqual(["human-1"]);
  expect(agent.pendingInterrupts).toMatchObject([{ id: interruptId, reason: "refund_approval" }]);
  expect(agent.state).toEqual({ decision: null });
  expect(agent.messages.map((m) => m.id)).toEqual([
    "human-1",
    "chatcmpl-toy-1",
    "tool-lookup-1",
    "ai-policy-1",
    "tool-policy-1",
  ]);

  const resume = buildResumeArray(agent.pendingInterrupts, {
    [interruptId]: { status: "resolved", payload: { decision: "approve" } },
  });
  await agent.runAgent({ runId: "run-2", resume });
  expect(resumeToCommand(server.requests[1]?.resume ?? []).resume).toEqual({
    [interruptId]: { decision: "approve" },
  });
  expect(agent.pendingInterrupts).toEqual([]);
  expect(agent.state).toEqual({ decision: { decision: "approve" } });
  expect(agent.messages.at(-1)).toEqual({
    id: "chatcmpl-toy-2",
    role: "assistant",
    content: "Refund approved: EUR 49.00 goes back to your card.",
  });
  expect(warn).not.toHaveBeenCalled();
  warn.mockRestore();
});
