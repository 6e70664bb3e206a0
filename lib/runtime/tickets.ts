import "server-only";
import type { Principal } from "@/lib/auth/roles";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { createThread } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { hasAgent, listAgents } from "./agent";

/**
 * File a customer ticket: the thread and its audit entry in one transaction. Whoever files it (a user or an intake
 * key) is its creator: four-eyes bars them from approving its refund, and a key may start only tickets it filed.
 */
export async function createTicket({
  db,
  by,
  message,
  orderRef,
  title,
  agent = "refund",
}: {
  db: AppDb;
  by: Principal;
  message: string;
  orderRef?: string;
  title?: string;
  /** The registered agent that handles the ticket. */
  agent?: string;
}): Promise<Thread> {
  if (!hasAgent(agent)) {
    throw new AppError("unprocessable:agent", `There is no agent ${agent}.`, {
      fields: ["agent"],
      agents: listAgents().map((a) => a.id),
    });
  }
  return db.transaction(async (tx) => {
    const thread = await createThread({
      db: tx,
      agentId: agent,
      title: title ?? message.slice(0, 80),
      customerMessage: message,
      orderRef: orderRef ?? null,
      createdBy: by.id,
    });
    await recordAudit({
      db: tx,
      entries: [
        {
          action: "ticket_created",
          actor: by,
          threadId: thread.id,
          detail: { agent, title: thread.title, orderRef: thread.orderRef, messageChars: message.length },
        },
      ],
    });
    return thread;
  });
}
