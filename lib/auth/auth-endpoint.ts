import "server-only";
import type { AppDb } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { readBodyText } from "@/lib/platform/http/http";
import { getAuth } from "./auth";
import { forBetterAuth } from "./client-ip";
import { sessionUser } from "./principal";
import { invalidateSessions } from "./session-cache";
import { withoutSessionTokens } from "./session-tokens";
import { signInWithEmail } from "./sign-in";

/** Bodies of better-auth's other endpoints (sign-out) are tiny. */
const AUTH_BODY_LIMIT = 16 * 1024;

/** A GET to better-auth (the session), with no session token in the body. */
export async function authGet(request: Request): Promise<Response> {
  return withoutSessionTokens(await (await getAuth()).handler(forBetterAuth(request)));
}

/**
 * A POST to better-auth: sign-in through our hardened path (client address, limits, audit), sign-out audited with
 * who it was, anything else passed on with a bounded body and no session token in the answer.
 */
export async function authPost({ db, request }: { db: AppDb; request: Request }): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (path.endsWith("/sign-in/email")) return signInWithEmail({ db, request });
  const auth = await getAuth();
  const forwarded = forBetterAuth(request, await readBodyText(request, AUTH_BODY_LIMIT));
  // Sessions may have changed: this process forgets cached ones at once (others hear the tables' NOTIFY).
  if (!path.endsWith("/sign-out")) {
    const response = await auth.handler(forwarded);
    invalidateSessions();
    return withoutSessionTokens(response);
  }
  const user = await sessionUser(request.headers);
  const response = await auth.handler(forwarded);
  invalidateSessions();
  if (user && response.ok) {
    await recordAudit({
      db,
      entries: [{ action: "sign_out", actor: { id: user.id, label: user.email, role: user.role } }],
    });
  }
  return response;
}
