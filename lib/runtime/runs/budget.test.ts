import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { Annotation, Command, END, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import fc from "fast-check";
import { countHeard } from "@/e2e/support/heard";
import { type BudgetDecision, BudgetGate, checkSpending, type Limits, limitsInForce } from "./budget";

/*
 * The budget gate on a real LangGraph graph: a node that calls a model several times and then asks a person. Whatever
 * the limit, the run pauses at the first model call past it with a `run_budget` question; the answer comes back to
 * that question only (the person's own question in the same node still gets the person's answer), a raise lets the
 * node finish, and a stop ends it without another model call.
 */

const USAGE = { input: 7, output: 3 };

/** A model that says "ok" and reports what it spent, counting the calls it was sent. */
class CountingModel extends BaseChatModel {
  calls = 0;
  constructor() {
    super({});
  }
  _llmType() {
    return "counting";
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    this.calls += 1;
    return {
      generations: [
        {
          text: "ok",
          message: new AIMessage({
            content: "ok",
            usage_metadata: {
              input_tokens: USAGE.input,
              output_tokens: USAGE.output,
              total_tokens: USAGE.input + USAGE.output,
            },
          }),
        },
      ],
    };
  }
}

const NONE: Limits = { run_tokens: 0, thread_tokens: 0, run_cost_micros: 0, thread_cost_micros: 0 };

function graphWith(model: CountingModel, calls: number) {
  const State = Annotation.Root({
    said: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
    approved: Annotation<unknown>(),
  });
  return new StateGraph(State)
    .addNode("work", async () => {
      const said: string[] = [];
      for (let i = 0; i < calls; i += 1) said.push(String((await model.invoke("go")).content));
      // The node's own question, after its model calls: it must get the person's answer, never a budget answer.
      const approved = interrupt({ action: "approval" });
      return { said, approved };
    })
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile({ checkpointer: new MemorySaver() });
}

/** Run (or resume) once with a fresh gate, as the executor does per run; the decisions are the ledger's so far. */
async function runOnce(
  graph: ReturnType<typeof graphWith>,
  input: unknown,
  limits: Limits,
  decisions: BudgetDecision[],
  spentBefore: number,
  retry = false,
) {
  const gate = new BudgetGate(
    { tokensIn: spentBefore, tokensOut: 0, decisions },
    { limits, price: null, retry },
  );
  const config = { configurable: { thread_id: "t" }, callbacks: [gate] };
  let error: unknown = null;
  await graph.invoke(input as Parameters<typeof graph.invoke>[0], config).catch((e: unknown) => {
    error = e;
  });
  const state = await graph.getState(config);
  const asked = state.tasks.flatMap((t) => t.interrupts ?? []);
  // A stop is the node's error, coded as a stopped run and naming who stopped it.
  const stop = error as { code?: string; details?: { by?: string } } | null;
  const stoppedBy = stop?.code === "conflict:run_cancelled" ? (stop.details?.by ?? null) : null;
  return { gate, asked, state, stoppedBy, error };
}

describe("budget gate", () => {
  test("pauses at the first model call past the run's limit; a raise lets the node finish with the person's answer", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 1, max: 50 }),
        async (calls, limit) => {
          const model = new CountingModel();
          const graph = graphWith(model, calls);
          const limits = { ...NONE, run_tokens: limit };
          const first = await runOnce(graph, { said: [] }, limits, [], 0);
          const per = USAGE.input + USAGE.output;
          // Calls that went out before the limit was reached: at least one, as many as fit under the limit.
          const before = Math.min(calls, Math.max(1, Math.ceil(limit / per)));
          expect(model.calls).toBe(before);
          const [question] = first.asked;
          if (before === calls) {
            // Every call fit: the only question is the node's own.
            expect(question?.value).toEqual({ action: "approval" });
            return;
          }
          expect(question?.value).toMatchObject({
            action: "run_budget",
            limit: "run_tokens",
            budget: limit,
            used: before * per,
            spent: { runTokens: before * per, threadTokens: before * per },
            node: "work",
          });
          // Raised far enough for the whole node: it runs again from its start and reaches its own question.
          const raise = { decision: "raise" as const, to: 1_000_000 };
          const decisions: BudgetDecision[] = [{ limit: "run_tokens", answer: raise, by: "ops@example.com" }];
          const second = await runOnce(
            graph,
            new Command({ resume: { [question?.id as string]: raise } }),
            limits,
            decisions,
            before * per,
          );
          expect(second.asked.map((i) => i.value)).toEqual([{ action: "approval" }]);
          expect(model.calls).toBe(before + calls);
          // The person's answer reaches the person's question (the budget answer, earlier in the node, is the gate's).
          const approval = { decision: "approve" };
          await runOnce(
            graph,
            new Command({ resume: { [second.asked[0]?.id as string]: approval } }),
            limits,
            decisions,
            0,
          );
          const done = await graph.getState({ configurable: { thread_id: "t" } });
          expect(done.values.approved).toEqual(approval);
          expect(done.values.said).toHaveLength(calls);
        },
      ),
      { numRuns: 25 },
    );
  });

  test("a node that streams a model itself is held by checkSpending, given its config", async () => {
    const model = new CountingModel();
    const State = Annotation.Root({
      said: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
    });
    const graph = new StateGraph(State)
      .addNode("write", async (_state, config) => {
        const said: string[] = [];
        for (let i = 0; i < 3; i += 1) {
          checkSpending(config);
          for await (const chunk of await model.stream("go", config)) said.push(String(chunk.content));
        }
        return { said };
      })
      .addEdge(START, "write")
      .addEdge("write", END)
      .compile({ checkpointer: new MemorySaver() });
    const gate = new BudgetGate(
      { tokensIn: 0, tokensOut: 0, decisions: [] },
      {
        limits: { ...NONE, run_tokens: 15 },
      },
    );
    const config = { configurable: { thread_id: "s" }, callbacks: [gate] };
    await graph.invoke({ said: [] }, config);
    // 10 tokens a call: the second call goes out (10 < 15), the third waits (20 ≥ 15).
    expect(model.calls).toBe(2);
    const state = await graph.getState(config);
    expect(state.tasks.flatMap((t) => t.interrupts ?? []).map((i) => i.value)).toMatchObject([
      { action: "run_budget", limit: "run_tokens", used: 20, node: "write" },
    ]);
  });

  test("with a price, the cost limits hold too: a run pauses at the first call past its cost", async () => {
    const model = new CountingModel();
    const graph = graphWith(model, 4);
    // $2 per million input tokens, $10 per million output: a call (7 in, 3 out) costs 44 millionths of a dollar.
    const price = { input: 2, output: 10 };
    const gate = new BudgetGate(
      { tokensIn: 0, tokensOut: 0, decisions: [] },
      {
        limits: { ...NONE, run_cost_micros: 100 },
        price,
      },
    );
    const config = { configurable: { thread_id: "c" }, callbacks: [gate] };
    await graph.invoke({ said: [] }, config);
    // Spent before each call: 0, 44, 88 (< 100, they go out); the fourth finds 132 ≥ 100.
    expect(model.calls).toBe(3);
    const state = await graph.getState(config);
    expect(state.tasks.flatMap((t) => t.interrupts ?? []).map((i) => i.value)).toMatchObject([
      {
        action: "run_budget",
        limit: "run_cost_micros",
        budget: 100,
        used: 132,
        spent: { runTokens: 30, runCostMicros: 132, threadCostMicros: 132 },
      },
    ]);
    // Without a price there is no cost to hold to: the same limits let every call through.
    const free = new CountingModel();
    const unpriced = graphWith(free, 4);
    const open = new BudgetGate(
      { tokensIn: 0, tokensOut: 0, decisions: [] },
      {
        limits: { ...NONE, run_cost_micros: 100 },
        price: null,
      },
    );
    await unpriced.invoke({ said: [] }, { configurable: { thread_id: "d" }, callbacks: [open] });
    expect(free.calls).toBe(4);
  });

  test("the thread's limit counts what earlier runs spent", async () => {
    const model = new CountingModel();
    const graph = graphWith(model, 2);
    const run = await runOnce(graph, { said: [] }, { ...NONE, thread_tokens: 100 }, [], 95);
    // 95 before; the first call (10 more) passes, the second finds 105 ≥ 100.
    expect(model.calls).toBe(1);
    expect(run.asked[0]?.value).toMatchObject({ action: "run_budget", limit: "thread_tokens", used: 105 });
  });

  test("a stop ends the node at once: no model call after it, the stop told who gave it", async () => {
    const model = new CountingModel();
    const graph = graphWith(model, 3);
    const limits = { ...NONE, run_tokens: 10 };
    const first = await runOnce(graph, { said: [] }, limits, [], 0);
    expect(model.calls).toBe(1);
    const stop = { decision: "stop" as const, note: "Looping." };
    const stopped = await runOnce(
      graph,
      new Command({ resume: { [first.asked[0]?.id as string]: stop } }),
      limits,
      [{ limit: "run_tokens", answer: stop, by: "lead@example.com" }],
      10,
    );
    expect(stopped.stoppedBy).toBe("lead@example.com");
    expect(stopped.error).toBeTruthy();
    // The node ran again and met the answer at its first model call: nothing was sent after the stop.
    expect(model.calls).toBe(1);
  });

  test("after a stop, Try again asks again where the run is still past its limit; a raise then lets the node finish", async () => {
    const model = new CountingModel();
    const graph = graphWith(model, 3);
    const limits = { ...NONE, thread_tokens: 10 };
    const first = await runOnce(graph, { said: [] }, limits, [], 0);
    const stop = { decision: "stop" as const, note: "Looping." };
    const ledger: BudgetDecision[] = [{ limit: "thread_tokens", answer: stop, by: "lead@example.com" }];
    const stopped = await runOnce(
      graph,
      new Command({ resume: { [first.asked[0]?.id as string]: stop } }),
      limits,
      ledger,
      10,
    );
    expect(stopped.stoppedBy).toBe("lead@example.com");
    // Try again (a retry continues from the checkpoint): the stop does not stop it; the thread is still past its
    // limit, so the same place asks again — a new question, not the stop replayed.
    const retried = await runOnce(graph, null, limits, ledger, 10, true);
    expect(retried.stoppedBy).toBeNull();
    expect(retried.asked.map((i) => i.value)).toMatchObject([
      { action: "run_budget", limit: "thread_tokens" },
    ]);
    expect(retried.asked[0]?.id).not.toBe(first.asked[0]?.id);
    expect(model.calls).toBe(1);
    // Raised this time: every later run of the node passes the old stop (it was asked again after it) and the raise.
    const raise = { decision: "raise" as const, to: 1_000 };
    const raised = [...ledger, { limit: "thread_tokens" as const, answer: raise, by: "ops@example.com" }];
    const on = await runOnce(
      graph,
      new Command({ resume: { [retried.asked[0]?.id as string]: raise } }),
      limits,
      raised,
      10,
    );
    expect(on.stoppedBy).toBeNull();
    expect(on.asked.map((i) => i.value)).toEqual([{ action: "approval" }]);
    expect(model.calls).toBe(4);
  });

  test("the ledger's latest raise of a limit is the limit in force; other limits keep the deployment's", () => {
    const raise = (limit: BudgetDecision["limit"], to: number): BudgetDecision => ({
      limit,
      answer: { decision: "raise", to },
      by: "x",
    });
    expect(
      limitsInForce({ ...NONE, run_tokens: 10, thread_tokens: 50 }, [
        raise("run_tokens", 20),
        raise("run_tokens", 40),
        { limit: "thread_tokens", answer: { decision: "stop", note: "no" }, by: "y" },
      ]),
    ).toEqual({ ...NONE, run_tokens: 40, thread_tokens: 50 });
  });
  test("is told of model calls only: a graph's chains, tools and channel writes never reach it", async () => {
    const model = new CountingModel();
    const graph = graphWith(model, 3);
    const gate = new BudgetGate({ tokensIn: 0, tokensOut: 0, decisions: [] }, { limits: NONE, price: null });
    const heard = countHeard(gate, [
      ["_createRunForChainStart", "chains"],
      ["handleChainStart", "chains"],
      ["handleChainEnd", "chains"],
      ["_createRunForChatModelStart", "models"],
    ]);
    await graph.invoke({ said: [] }, { configurable: { thread_id: "told" }, callbacks: [gate] });
    expect(heard).toEqual({ chains: 0, models: 3 });
    // It still counts what the calls spent.
    expect(gate.tokens()).toEqual({ in: 3 * USAGE.input, out: 3 * USAGE.output });
  });
});
