import { z } from "zod";
import { claimForPrincipal } from "@/lib/queue/claims";
import { json, route } from "@/lib/route";

export const dynamic = "force-dynamic";

const claimBody = z.strictObject({
  interruptId: z.string().min(1).max(200),
  /** `claim` (default) is refused while someone else handles it; `take_over` takes it from them. */
  mode: z.enum(["claim", "take_over"]).default("claim"),
  /** A supervisor assigns it to this operator (email) instead. */
  assignTo: z.email().max(320).optional(),
});

/** Claim a pending decision (soft lock with a TTL): 200 `{ claim }`, 409 `conflict:claimed` with the holder. */
export const POST = route<Record<string, never>, z.infer<typeof claimBody>>(
  {
    name: "POST /api/inbox/claims",
    access: "operator",
    body: { schema: claimBody, code: "bad_request:claim", what: "The claim" },
  },
  async ({ body, principal, database: { db } }) =>
    json({ claim: await claimForPrincipal({ db, principal, ...body }) }),
);
