import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { decideInBulk } from "@/lib/queue/bulk";

export const dynamic = "force-dynamic";

const bulkBody = z.strictObject({
  /** Pending decisions of one action, each decided on its own. */
  interruptIds: z.array(z.string().min(1).max(200)).min(1).max(100),
  verb: z.enum(["approve", "reject"]),
  /** One note for all (required to reject). */
  note: z.string().max(2000).optional(),
});

/**
 * Approve or reject several decisions at once: 200 `{ done: […], refused: [{ interruptId, code, message }] }` — each
 * item is claimed and decided on its own, with its own contract and four-eyes checks.
 */
export const POST = route<Record<string, never>, z.infer<typeof bulkBody>>(
  {
    name: "POST /api/inbox/bulk",
    access: "operator",
    startsRun: true,
    body: { schema: bulkBody, code: "bad_request:bulk", what: "The bulk decision" },
  },
  async ({ body, principal, database, scope }) =>
    json(await decideInBulk({ database, principal, ...body, scope: await scope() })),
);
