import { Annotation, interrupt, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

/** A small approval graph for saver tests: intake → review (interrupt) → decide → reply. */
export const ApprovalState = Annotation.Root({
  order: Annotation<string>(),
  note: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
  decision: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
  log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

export function buildApprovalGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(ApprovalState)
    .addNode("intake", (s) => ({ log: [`intake ${s.order}`] }))
    .addNode("review", (s) => {
      const answer = interrupt({ action: "refund_approval", order: s.order }) as string;
      return { decision: answer, log: [`review ${answer}`] };
    })
    .addNode("decide", (s) => ({ log: [`decided ${s.decision}`] }))
    .addNode("reply", (s) => ({ log: [`reply ${s.decision}${s.note ? ` (${s.note})` : ""}`] }))
    .addEdge("__start__", "intake")
    .addEdge("intake", "review")
    .addEdge("review", "decide")
    .addEdge("decide", "reply")
    .addEdge("reply", "__end__")
    .compile({ checkpointer });
}
