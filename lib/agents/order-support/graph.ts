import "server-only";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { reviewToolCalls } from "@/lib/agents/kit/reviewed-tools";
import type { AppDb } from "@/lib/db/open";
import { env } from "@/lib/platform/env";
import { OrderSupportOfflineModel } from "./offline-model";
import { orderSupportTools, storeCreditArgs } from "./tools";

/** The tools a person reviews before they run, with what they may do and the edit form's schema. */
export const REVIEWED_TOOLS = {
  issue_store_credit: {
    allowedDecisions: ["approve", "edit", "reject"] as ("approve" | "edit" | "reject")[],
    description:
      "The agent wants to give the customer store credit. Approve it, change the amount, or reject it.",
    argsSchema: z.toJSONSchema(storeCreditArgs) as Record<string, unknown>,
  },
};

/**
 * A LangChain `createAgent` with tools, reviewed by `humanInTheLoopMiddleware` (through the kit's `reviewToolCalls`, so the review settings are part of the
 * structure hash): nothing of the console's is in it. The
 * console reads its standard interrupts as `tool_review` questions and resumes it in the middleware's own format.
 */
export function buildOrderSupportGraph({
  checkpointer,
  db,
  tools = orderSupportTools(db),
  middleware = [reviewToolCalls(REVIEWED_TOOLS)],
  model = new OrderSupportOfflineModel({ thinkMsPerWord: env.OFFLINE_TOKEN_DELAY_MS }),
}: {
  checkpointer: BaseCheckpointSaver;
  db: AppDb;
  /** Its tools and its review middleware: the agent's own by default (other ones only in the structure tests). */
  tools?: ReturnType<typeof orderSupportTools>;
  middleware?: ReturnType<typeof reviewToolCalls>[];
  /** Its model: the offline one by default (a scripted one in tests that need the model to say something else). */
  model?: BaseChatModel;
}) {
  return createAgent({
    name: "order_support",
    model,
    tools,
    systemPrompt:
      "You help customers with their orders. Look the order up first; offer store credit when something went wrong. " +
      "Tell the customer only what the credit tool recorded: when it says a person adds the credit, say a colleague " +
      "will add it, never that it is being processed.",
    middleware,
    checkpointer,
  }).graph;
}
