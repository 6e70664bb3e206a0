import "server-only";
import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import {
  type ConfigProposal,
  insertProposal,
  listPendingProposals,
  lockProposal,
  markProposal,
} from "@/lib/db/queries/proposals";
import type { Queryable } from "@/lib/db/tx";
import {
  type AuthorityChange,
  applyAuthorityChange,
  authorityChange,
  checkAuthorityChange,
} from "./authority";

/*
 * Four-eyes on configuration (issue 57), one mechanism under every setting that governs money or who decides: an
 * admin's change is a proposal — checked when proposed (a change that cannot apply is refused then, nothing written)
 * and again when applied — and takes effect only when a second admin approves it, in one transaction with its audit.
 * The admin who proposed may withdraw it (reject), never approve it. Settings under it so far: money limits
 * (`authority`).
 */

interface Setting<C> {
  schema: z.ZodType<C>;
  check(args: { db: Queryable; change: C }): Promise<void>;
  apply(args: { db: Queryable; change: C; by: Principal }): Promise<unknown>;
}

const SETTINGS = {
  authority: {
    schema: authorityChange,
    check: checkAuthorityChange,
    apply: applyAuthorityChange,
  } satisfies Setting<AuthorityChange>,
} as const;
export type SettingKind = keyof typeof SETTINGS;

/** A decision on a proposal (`POST /api/admin/proposals/{id}`). */
export const proposalDecision = z.strictObject({
  decision: z.enum(["approve", "reject"]),
  note: z.string().trim().max(500).optional(),
});

/** Propose a change of `kind`: 202 with the proposal; a change that could not apply is refused now, nothing written. */
export async function proposeChange<K extends SettingKind>({
  db,
  kind,
  change,
  by,
}: {
  db: AppDb;
  kind: K;
  change: z.infer<(typeof SETTINGS)[K]["schema"]>;
  by: Principal;
}): Promise<ConfigProposal> {
  return db.transaction(async (tx) => {
    await SETTINGS[kind].check({ db: tx, change });
    return insertProposal({ db: tx, kind, change, by });
  });
}

/** The proposals waiting for a second admin. */
export async function readProposals({ db }: { db: AppDb }) {
  return { proposals: await listPendingProposals({ db }) };
}

/**
 * Approve (apply) or reject a proposal, once: 404 `not_found:proposal`, 409 `conflict:proposal_decided` when it was
 * decided already, 403 `forbidden:four_eyes_config` when its own proposer approves it; a change that no longer applies
 * is refused with its setting's code and the proposal stays pending.
 */
export async function decideProposal({
  db,
  id,
  decision,
  note,
  by,
}: {
  db: AppDb;
  id: string;
  decision: "approve" | "reject";
  note?: string;
  by: Principal;
}): Promise<{ proposal: ConfigProposal; result: unknown }> {
  return db.transaction(async (tx) => {
    const proposal = await lockProposal({ db: tx, id });
    if (!proposal) throw new AppError("not_found:proposal", `There is no proposal ${id}.`);
    if (proposal.status !== "pending") {
      throw new AppError("conflict:proposal_decided", `This proposal was ${proposal.status} already.`, {
        status: proposal.status,
        decidedBy: proposal.decidedBy,
      });
    }
    if (decision === "reject") {
      const marked = await markProposal({
        db: tx,
        proposal,
        status: "rejected",
        by,
        outcome: { note: note ?? null },
      });
      return { proposal: marked, result: null };
    }
    if (proposal.proposedBy === by.id) {
      throw new AppError(
        "forbidden:four_eyes_config",
        "You proposed this change: another admin must approve it (you may withdraw it).",
        { proposalId: id },
      );
    }
    const setting = SETTINGS[proposal.kind as SettingKind] as Setting<unknown> | undefined;
    if (!setting) throw new AppError("unprocessable:proposal", `No setting is called ${proposal.kind}.`);
    const change = setting.schema.parse(proposal.change);
    const result = await setting.apply({ db: tx, change, by });
    const marked = await markProposal({ db: tx, proposal, status: "applied", by, outcome: result });
    return { proposal: marked, result };
  });
}
