import "server-only";
import { listEmailsForThread } from "@/lib/db/queries/outbox";
import type { Queryable } from "@/lib/db/tx";
import type { SideEffectWarning } from "@/lib/runtime/agent";

/**
 * The thread's replies already in the outbox, as fork warnings: a branch may reach the sending step again, and the
 * outbox keeps one reply per thread, so no second email is sent. Shared by every agent that replies by email.
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
      `The reply "${email.subject}" to ${email.toAddress} is already sent (later on this branch or on another ` +
      "one). A branch from here may reach the email step again; the outbox keeps one reply per thread, so no " +
      "second email is sent.",
  }));
}
