import "server-only";
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import type { Principal } from "@/lib/contract/roles";
import { rowsOf } from "../rows";
import { type ConfigProposal, configProposals } from "../schema";
import type { Queryable } from "../tx";
import { recordAudit } from "./audit";

/* Proposed configuration changes (four-eyes on configuration, issue 57): stored, listed, decided once. */

export type { ConfigProposal };

/** Record a proposal (audited as `config_proposed` with the change asked for). */
export async function insertProposal({
  db,
  kind,
  change,
  by,
}: {
  db: Queryable;
  kind: string;
  change: unknown;
  by: Principal;
}): Promise<ConfigProposal> {
  const [row] = await db
    .insert(configProposals)
    .values({ id: randomUUID(), kind, change, proposedBy: by.id })
    .returning();
  if (!row) throw new Error("insertProposal: no row");
  await recordAudit({
    db,
    entries: [{ action: "config_proposed", actor: by, detail: { proposalId: row.id, kind, change } }],
  });
  return row;
}

/** Pending proposals, oldest first, with who proposed them. */
export async function listPendingProposals({
  db,
}: {
  db: Queryable;
}): Promise<(ConfigProposal & { proposedByEmail: string | null })[]> {
  return rowsOf<ConfigProposal & { proposedByEmail: string | null }>(
    await db.execute(sql`SELECT p.id, p.kind, p.change, p.proposed_by AS "proposedBy", p.proposed_at AS "proposedAt",
        p.status, p.decided_by AS "decidedBy", p.decided_at AS "decidedAt", p.outcome, u.email AS "proposedByEmail"
      FROM config_proposals p LEFT JOIN auth_users u ON u.id = p.proposed_by
      WHERE p.status = 'pending' ORDER BY p.proposed_at, p.id`),
  );
}

/** One proposal, its row locked until the transaction ends (a decision takes it once). */
export async function lockProposal({
  db,
  id,
}: {
  db: Queryable;
  id: string;
}): Promise<ConfigProposal | null> {
  const [row] = await db.select().from(configProposals).where(eq(configProposals.id, id)).for("update");
  return row ?? null;
}

/** Record what became of a proposal (audited as `config_decided`). */
export async function markProposal({
  db,
  proposal,
  status,
  by,
  outcome,
}: {
  db: Queryable;
  proposal: ConfigProposal;
  status: "applied" | "rejected";
  by: Principal;
  outcome: unknown;
}): Promise<ConfigProposal> {
  const [row] = await db
    .update(configProposals)
    .set({ status, decidedBy: by.id, decidedAt: new Date(), outcome })
    .where(eq(configProposals.id, proposal.id))
    .returning();
  if (!row) throw new Error("markProposal: no row");
  await recordAudit({
    db,
    entries: [
      {
        action: "config_decided",
        actor: by,
        detail: {
          proposalId: proposal.id,
          kind: proposal.kind,
          status,
          proposedBy: proposal.proposedBy,
          change: proposal.change,
        },
      },
    ],
  });
  return row;
}
