import "server-only";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import {
  Annotation,
  type BaseCheckpointSaver,
  END,
  interrupt,
  type LangGraphRunnableConfig,
  START,
  StateGraph,
} from "@langchain/langgraph";

/*
 * A team's own agent whose question is asked inside a subgraph (a nested checkpoint namespace): the parent prepares,
 * the `approval` subgraph proposes closing the ticket and asks in LangChain's review format, the parent wraps up.
 */

const Shared = {
  messages: Annotation<(HumanMessage | AIMessage)[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  resolution: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
  closed: Annotation<boolean>({ reducer: (_a, b) => b, default: () => false }),
};
export const NestedState = Annotation.Root(Shared);
type State = typeof NestedState.State;

interface Decisions {
  decisions: ({ type: "approve" } | { type: "reject"; message?: string })[];
}

function approvalSubgraph() {
  return new StateGraph(Annotation.Root(Shared))
    .addNode("propose", (s: State) => ({
      resolution: `Answered: ${String(s.messages.at(-1)?.content ?? "").slice(0, 60)}`,
    }))
    .addNode("ask", (s: State) => {
      const { decisions } = interrupt<unknown, Decisions>({
        actionRequests: [
          {
            name: "close_ticket",
            args: { resolution: s.resolution },
            description: "Close the ticket as resolved?",
          },
        ],
        reviewConfigs: [{ actionName: "close_ticket", allowedDecisions: ["approve", "reject"] }],
      });
      return { closed: decisions[0]?.type === "approve" };
    })
    .addEdge(START, "propose")
    .addEdge("propose", "ask")
    .addEdge("ask", END)
    .compile();
}

export function buildNestedReviewGraph({ checkpointer }: { checkpointer: BaseCheckpointSaver }) {
  return new StateGraph(NestedState)
    .addNode("prepare", () => ({ closed: false }))
    .addNode("approval", approvalSubgraph())
    .addNode("wrap_up", (s: State, config: LangGraphRunnableConfig) => ({
      messages: [
        new AIMessage({
          id: `nested-review-${String(config.configurable?.thread_id)}-${s.messages.length}`,
          content: s.closed ? "A person closed the ticket." : "A person kept the ticket open.",
        }),
      ],
    }))
    .addEdge(START, "prepare")
    .addEdge("prepare", "approval")
    .addEdge("approval", "wrap_up")
    .addEdge("wrap_up", END)
    .compile({ checkpointer, name: "nested_review" });
}

export function nestedReviewInput({ messageId, text }: { messageId: string; text: string }) {
  return { messages: [new HumanMessage({ id: messageId, content: text })] };
}
