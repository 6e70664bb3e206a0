import { randomUUID } from "node:crypto";
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { parseInterruptPayload, validateAnswer } from "@/lib/interrupts";
import { encodeDecisions } from "@/lib/interrupts/tool-review";
import { DrizzleCheckpointSaver } from "./saver";

/*
 * Issue 30: two kinds of graph the console must take as they are, on our checkpointer in a real database (both):
 * - an interrupt raised inside a subgraph (a nested checkpoint namespace);
 * - a raw `interrupt()` graph raising agent-inbox's `HumanInterrupt`.
 * Each flow: the interrupt is raised and read as the console reads a pending decision (the head's tasks); a
 * "refresh" — a new saver and a new compiled graph, as after a restart — finds it again; the answer resumes it to the
 * end; the history holds the steps; a fork from the step before the interrupt asks again, and answering there
 * leaves the first line as it was.
 */

const State = Annotation.Root({
  request: Annotation<string>(),
  answer: Annotation<unknown>(),
  done: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** The review subgraph's own state: what it shares with the parent (request, answer) and its own steps. */
const ReviewState = Annotation.Root({
  request: Annotation<string>(),
  answer: Annotation<unknown>(),
  checked: Annotation<boolean>(),
});

/** A graph whose review happens in a subgraph: `prepare → review (check → ask) → finish`. */
function subgraphGraph(checkpointer: DrizzleCheckpointSaver) {
  const review = new StateGraph(ReviewState)
    .addNode("check", async () => ({ checked: true }))
    .addNode("ask", async (state: typeof ReviewState.State) => {
      const answer = interrupt({
        action: "select_option",
        title: `How to handle ${state.request}`,
        question: "Which way?",
        options: [
          { id: "refund", label: "Refund" },
          { id: "replace", label: "Replace" },
        ],
      });
      return { answer };
    })
    .addEdge(START, "check")
    .addEdge("check", "ask")
    .addEdge("ask", END)
    .compile();
  return new StateGraph(State)
    .addNode("prepare", async () => ({ done: ["prepare"] }))
    .addNode("review", review)
    .addNode("finish", async () => ({ done: ["finish"] }))
    .addEdge(START, "prepare")
    .addEdge("prepare", "review")
    .addEdge("review", "finish")
    .addEdge("finish", END)
    .compile({ checkpointer });
}

/** A raw graph raising agent-inbox's HumanInterrupt (a list of one) and acting on its response. */
function humanInterruptGraph(checkpointer: DrizzleCheckpointSaver) {
  return new StateGraph(State)
    .addNode("draft", async () => ({ done: ["draft"] }))
    .addNode("review", async (state: typeof State.State) => {
      const [response] = interrupt([
        {
          action_request: { action: "send_voucher", args: { to: state.request, amountCents: 500 } },
          config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
          description: "Send a goodwill voucher?",
        },
      ]) as { type: string; args: unknown }[];
      return { answer: response, done: ["review"] };
    })
    .addEdge(START, "draft")
    .addEdge("draft", "review")
    .addEdge("review", END)
    .compile({ checkpointer });
}

type Graph = ReturnType<typeof subgraphGraph> | ReturnType<typeof humanInterruptGraph>;

const flows = [
  {
    name: "an interrupt inside a subgraph",
    build: subgraphGraph,
    action: "select_option",
    answer: () => ({ optionId: "replace" }),
    other: () => ({ optionId: "refund" }),
    steps: ["prepare", "finish"],
  },
  {
    name: "an agent-inbox HumanInterrupt",
    build: humanInterruptGraph,
    action: "tool_review",
    answer: (payload: unknown) =>
      encodeDecisions(payload as Parameters<typeof encodeDecisions>[0], [{ type: "approve" }]),
    other: (payload: unknown) =>
      encodeDecisions(payload as Parameters<typeof encodeDecisions>[0], [{ type: "reject", message: "No." }]),
    steps: ["draft", "review"],
  },
] as const;

describe.each<Backend>(["pglite", "postgres"])("standard interrupts on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    backend = await openBackend(kind);
  }, 120_000);
  afterAll(() => backend?.close());

  /** What the console reads as pending: the interrupts of the head's tasks (`getThreadView`). */
  async function pending(graph: Graph, config: { configurable: { thread_id: string } }) {
    const state = await graph.getState(config);
    return state.tasks.flatMap((t) => t.interrupts ?? []);
  }
  async function runTo(graph: Graph, input: unknown, config: object) {
    for await (const _ of await graph.stream(input as never, config)) {
      // to the next pause or the end
    }
  }

  it.each(flows)(
    "$name: raised, found after a refresh, resumed, in the history, forked from before",
    async (flow) => {
      const config = { configurable: { thread_id: randomUUID() } };
      await runTo(flow.build(new DrizzleCheckpointSaver(backend.database.sql)), { request: "ORD-1" }, config);

      // A refresh: a new saver and graph find the pending question, readable by the console's contract.
      const graph = flow.build(new DrizzleCheckpointSaver(backend.database.sql));
      const [raised] = await pending(graph, config);
      expect(raised?.id).toEqual(expect.any(String));
      const parsed = parseInterruptPayload(raised?.value);
      if (!parsed.ok) throw new Error(parsed.error);
      expect(parsed.payload.action).toBe(flow.action);
      const answer = flow.answer(parsed.payload);
      expect(validateAnswer(parsed.payload, answer)).toMatchObject({ ok: true });

      // Resumed by its id, as the console resumes a decision, to the end.
      await runTo(graph, new Command({ resume: { [raised?.id as string]: answer } }), config);
      const done = await graph.getState(config);
      expect(done.next).toEqual([]);
      expect(done.values.done).toEqual(flow.steps);
      expect(await pending(graph, config)).toEqual([]);

      // The history has every step; the one before the question is where a fork asks it again.
      const history = [];
      for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
      expect(history.length).toBeGreaterThanOrEqual(flow.steps.length);
      const before = history.find(
        (s) => s.tasks.some((t) => (t.interrupts ?? []).length > 0) && s.next.length > 0,
      );
      expect(before, "the step that asked").toBeDefined();
      const parent = history.find(
        (s) => s.config.configurable?.checkpoint_id === before?.parentConfig?.configurable?.checkpoint_id,
      );
      expect(parent, "the step before the question").toBeDefined();
      const forked = await graph.updateState(parent?.config as never, {}, undefined);
      await runTo(graph, null, forked);
      const [again] = await pending(graph, config);
      expect(again?.id).toEqual(expect.any(String));
      const reread = parseInterruptPayload(again?.value);
      expect(reread.ok && reread.payload.action).toBe(flow.action);
      if (!reread.ok) return;
      await runTo(
        graph,
        new Command({ resume: { [again?.id as string]: flow.other(reread.payload) } }),
        config,
      );
      const branch = await graph.getState(config);
      expect(branch.next).toEqual([]);
      expect(branch.values.answer).not.toEqual(done.values.answer);
      // The first line is still there, as it ended.
      const first = await graph.getState(done.config);
      expect(first.values.answer).toEqual(done.values.answer);
    },
  );
});
