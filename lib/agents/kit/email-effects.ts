import "server-only";
import { listEmailsForThread } from "@/lib/db/queries/outbox";
import type { Queryable } from "@/lib/db/tx";
import type { SideEffectWarning } from "@/lib/runtime/agents/registry";

/**
 * The thread's replies already in the outbox, as fork warnings: a branch may reach the sending step again. An email
 * is keyed by the decision that approved it, so a re-run never sends one twice, but a reply approved again on the
 * branch is a new email. Shared by every agent that replies by email.
 */
export async function emailWarnings({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<SideEffectWarning[]> {
  return (await listEmailsForThread({ db, threadId })).map((email) => ({
    code: "side_effect:email" as const,
    recordId: email.id,
    message:
      `The reply "${email.subject}" to ${email.toAddress} is already queued or sent (later on this branch or on ` +
      "another one), and a branch cannot unsend it. A branch from here may reach the email step again: a reply " +
      "approved there is a new email to the customer.",
  }));
}
