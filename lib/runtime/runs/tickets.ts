import "server-only";
import { randomUUID } from "node:crypto";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import { auditInsert, recordAudit } from "@/lib/db/queries/audit";
import { supersedeOtherPending } from "@/lib/db/queries/decisions";
import { dropWaitingInputs } from "@/lib/db/queries/queued-inputs";
import { getActiveRun } from "@/lib/db/queries/runs";
import { createThread, lockThread, setThreadStatus } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import { boundedLabel, metrics } from "@/lib/platform/observability/metrics";
import { getOrder } from "@/lib/shop/orders";
import { getAgent, hasAgent, listAgents } from "../agents/registry";
import { readTicket } from "./intake";

/**
 * File a customer ticket: the thread and its audit entry in one statement. Whoever files it (a user or an intake
 * key) is its creator: four-eyes bars them from approving its refund, and a key may start only tickets it filed.
 */
export async function createTicket({
  db,
  by,
  fields,
  title,
  agent = "refund",
}: {
  db: AppDb;
  by: Principal;
  /** The ticket's fields: read with the agent's intake schema (400 naming a field it refuses). */
  fields: unknown;
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
  const definition = getAgent(agent);
  const { ticket, message, orderRef } = readTicket(definition, fields);
  // The customer the thread is about, whose key seals its state: the order's, when the ticket names a known one.
  const order = orderRef ? await getOrder({ db, orderId: orderRef }) : undefined;
  // The thread and its audit row in one statement.
  const id = randomUUID();
  const threadTitle = title ?? titleFrom(message);
  const filed = await createThread({
    db,
    id,
    agentId: agent,
    agentVersion: definition.version,
    title: threadTitle,
    customerMessage: message,
    orderRef,
    ticket,
    createdBy: by.id,
    subjectId: order?.subjectId ?? null,
    subjectEmail: order?.customerEmail ?? null,
    alongside: [
      await auditInsert({
        db,
        entries: [
          {
            action: "ticket_created",
            actor: by,
            threadId: id,
            // No words of the ticket: the entry is written with the thread, before any key could seal it.
            detail: { agent, orderRef, messageChars: message.length },
          },
        ],
      }),
    ],
  });
  metrics().ticketsCreated.inc({ agent: boundedLabel(agent) });
  return filed;
}

/**
 * Close a thread with a note (a supervisor's way out for a thread no version can run any more): no run may be active;
 * its open decisions become `superseded`; audited with the note. Nothing is deleted.
 */
export async function closeThread({
  db,
  threadId,
  by,
  note,
}: {
  db: AppDb;
  threadId: string;
  by: Principal;
  note: string;
}): Promise<{ threadId: string; status: "closed" }> {
  return db.transaction(async (tx) => {
    const thread = await lockThread({ tx, threadId });
    if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
    const active = await getActiveRun({ db: tx, threadId });
    if (active)
      throw new AppError("conflict:run_active", "A run is in progress on this thread.", { runId: active.id });
    await supersedeOtherPending({ db: tx, threadId, keep: [] });
    // Input queued behind a run will never run on a closed thread: dropped with it (kept in the table, as said).
    const dropped = await dropWaitingInputs({ db: tx, threadIds: [threadId] });
    await setThreadStatus({ db: tx, threadId, status: "closed" });
    await recordAudit({
      db: tx,
      entries: [{ action: "thread_closed", actor: by, threadId, detail: { note, droppedInputs: dropped } }],
    });
    return { threadId, status: "closed" as const };
  });
}

/** A title from the customer's message: its first 80 characters, cut at a word boundary with an ellipsis. */
export function titleFrom(message: string, limit = 80): string {
  const flat = message.replace(/\s+/g, " ").trim();
  if (flat.length <= limit) return flat;
  const cut = flat.slice(0, limit - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > limit / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:!?-]+$/, "")}…`;
}
