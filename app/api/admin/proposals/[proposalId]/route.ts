import type { z } from "zod";
import { json, route } from "@/lib/http/route";
import { decideProposal, proposalDecision } from "@/lib/queue/settings/proposals";

export const dynamic = "force-dynamic";

/**
 * Approve (apply) or reject a proposed configuration change: 200 `{ proposal, result }`. 403
 * `forbidden:four_eyes_config` when the admin who proposed it approves it; 409 `conflict:proposal_decided` when it was
 * decided already; 404 `not_found:proposal`.
 */
export const POST = route<{ proposalId: string }, z.infer<typeof proposalDecision>>(
  {
    name: "POST /api/admin/proposals/[proposalId]",
    access: "admin",
    body: { schema: proposalDecision, code: "bad_request:proposal", what: "The decision" },
  },
  async ({ params, body, principal, database: { db } }) =>
    json(
      await decideProposal({
        db,
        id: params.proposalId,
        decision: body.decision,
        ...(body.note ? { note: body.note } : {}),
        by: principal,
      }),
    ),
);
