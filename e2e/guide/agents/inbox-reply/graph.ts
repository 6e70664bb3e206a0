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
 * A team's own agent, written the agent-inbox way: a raw `interrupt()` raising a `HumanInterrupt` (an action request,
 * what the reviewer may do, a description) and reading back the agent-inbox response list. Nothing of the console's is
 * imported here: the console reads the standard request by itself.
 */

export const InboxReplyState = Annotation.Root({
  messages: Annotation<(HumanMessage | AIMessage)[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  draft: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
  /** How the draft addresses the customer: a field of this agent's own ticket (its intake). */
  tone: Annotation<"friendly" | "formal">({ reducer: (_a, b) => b, default: () => "friendly" }),
  outcome: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
});
type State = typeof InboxReplyState.State;

/** agent-inbox's response to a HumanInterrupt. */
type HumanResponse =
  | { type: "accept"; args: null }
  | { type: "ignore"; args: null }
  | { type: "response"; args: string }
  | { type: "edit"; args: { action: string; args: { body: string } } };

/** What the reviewer is offered, as this version asks it. */
export const INBOX_REVIEW = {
  config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
  description:
    "The agent drafted this reply. Accept it, edit it, tell the agent what to change, or ignore it.",
};

export function buildInboxReplyGraph({
  checkpointer,
  review = INBOX_REVIEW,
}: {
  checkpointer: BaseCheckpointSaver;
  /** The review as asked (this version's own by default; another only in the resume-check test). */
  review?: typeof INBOX_REVIEW;
}) {
  return new StateGraph(InboxReplyState)
    .addNode("write_draft", (s: State) => {
      const asked = String(s.messages.at(-1)?.content ?? "");
      const greeting =
        s.tone === "formal" ? "Dear customer, thank you for your message." : "Thanks for writing!";
      return { draft: `${greeting} About "${asked.slice(0, 80)}": we are on it.` };
    })
    .addNode("review", (s: State) => {
      const [response] = interrupt<unknown, HumanResponse[]>([
        {
          action_request: { action: "send_reply", args: { body: s.draft } },
          config: review.config,
          description: review.description,
        },
      ]);
      if (response?.type === "accept") return { outcome: `approved: ${s.draft}` };
      if (response?.type === "edit") return { outcome: `approved as edited: ${response.args.args.body}` };
      if (response?.type === "response") return { outcome: `answered: ${response.args}` };
      return { outcome: "ignored" };
    })
    .addNode("finish", (s: State, config: LangGraphRunnableConfig) => ({
      messages: [
        new AIMessage({
          id: `inbox-reply-${String(config.configurable?.thread_id)}-${s.messages.length}`,
          content: `Reviewed by a person (${s.outcome.split(":")[0]}). Nothing was sent: this agent only drafts.`,
        }),
      ],
    }))
    .addEdge(START, "write_draft")
    .addEdge("write_draft", "review")
    .addEdge("review", "finish")
    .addEdge("finish", END)
    .compile({ checkpointer, name: "inbox_reply" });
}

export function inboxReplyInput({
  messageId,
  text,
  tone,
}: {
  messageId: string;
  text: string;
  tone: "friendly" | "formal";
}) {
  return { messages: [new HumanMessage({ id: messageId, content: text })], tone };
}
