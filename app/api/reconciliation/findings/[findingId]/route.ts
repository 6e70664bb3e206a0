import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { closeFinding } from "@/lib/runtime/views/reconciliation-actions";

export const dynamic = "force-dynamic";

const findingBody = z.strictObject({
  /** The difference was dealt with (at the provider, in the shop, or found to be right). */
  action: z.literal("mark_handled"),
  note: z.string().trim().max(2000).optional(),
});

/** Close a finding's operator task (supervisors); audited with the note. 404 unknown, 409 closed before. */
export const POST = route<{ findingId: string }, z.infer<typeof findingBody>>(
  {
    name: "POST /api/reconciliation/findings/[findingId]",
    access: "supervisor",
    body: { schema: findingBody, code: "bad_request:finding", what: "The finding's task" },
  },
  async ({ params: { findingId }, body, principal, database: { db } }) =>
    json(await closeFinding({ db, findingId, note: body.note ?? null, principal })),
);
