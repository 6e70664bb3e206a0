import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { claimForPrincipal, listClaimsOnThread } from "@/lib/queue/claims";

export const dynamic = "force-dynamic";

const claimBody = z.strictObject({
  interruptId: z.string().min(1).max(200),
  /** `claim` (default) is refused while someone else handles it; `take_over` takes it from them. */
  mode: z.enum(["claim", "take_over"]).default("claim"),
  /** A supervisor assigns it to this operator (email) instead. */
  assignTo: z.email().max(320).optional(),
});

const claimsQuery = z.strictObject({
  /** The thread whose pending decisions' claims are wanted. */
  threadId: z.string().min(1).max(200),
});

/** Who is handling a thread's pending decisions: `{ claims: [...] }` (live claims only; the thread page reads it). */
export const GET = route<Record<string, never>, undefined, z.infer<typeof claimsQuery>>(
  {
    name: "GET /api/inbox/claims",
    access: "viewer",
    query: { schema: claimsQuery, code: "bad_request:claims", what: "The claims query" },
  },
  async ({ query, database: { db } }) =>
    json({ claims: await listClaimsOnThread({ db, threadId: query.threadId }) }),
);

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
