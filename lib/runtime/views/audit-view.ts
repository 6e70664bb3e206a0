import "server-only";
import { type AuditFilter, listAudit } from "@/lib/db/queries/audit";
import type { AuditEntry } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";

/*
 * The audit trail as its readers see it (the audit page and `GET /api/audit`): newest first, filtered, keyset-paged,
 * and only what the reader's teams may see. Read-only: nothing anywhere edits or deletes an entry.
 */

/** A page of the audit trail; entries of threads whose agents are in `hiddenAgents` are left out. */
export function readAuditTrail({
  db,
  filter,
  hiddenAgents,
}: {
  db: Queryable;
  filter: AuditFilter;
  /** Agents whose threads the reader may not see (teams). */
  hiddenAgents: readonly string[];
}): Promise<{ items: AuditEntry[]; nextBefore: number | null }> {
  return listAudit({ db, filter, hiddenAgents });
}
