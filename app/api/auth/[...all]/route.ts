import { getAuth } from "@/lib/auth/auth";
import { forBetterAuth } from "@/lib/auth/client-ip";
import { sessionUser } from "@/lib/auth/principal";
import { withoutSessionTokens } from "@/lib/auth/session-tokens";
import { signInWithEmail } from "@/lib/auth/sign-in";
import { getDatabase } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { errorResponse } from "@/lib/errors";
import { assertSameOrigin, readBodyText } from "@/lib/http";

export const dynamic = "force-dynamic";

/** Bodies of better-auth's other endpoints (sign-out) are tiny. */
const AUTH_BODY_LIMIT = 16 * 1024;

/** better-auth's endpoints (sign-in, sign-out, session), mounted at /api/auth/*. No session token in any body. */
export async function GET(request: Request) {
  try {
    return await withoutSessionTokens(await (await getAuth()).handler(forBetterAuth(request)));
  } catch (error) {
    return errorResponse(error, "GET /api/auth");
  }
}

export async function POST(request: Request) {
  try {
    assertSameOrigin(request);
    const path = new URL(request.url).pathname;
    if (path.endsWith("/sign-in/email")) return await signInWithEmail(request);
    const auth = await getAuth();
    const forwarded = forBetterAuth(request, await readBodyText(request, AUTH_BODY_LIMIT));
    if (!path.endsWith("/sign-out")) return await withoutSessionTokens(await auth.handler(forwarded));
    // Sign-out goes into the audit trail with who it was.
    const user = await sessionUser(request.headers);
    const response = await auth.handler(forwarded);
    if (user && response.ok) {
      const { db } = await getDatabase();
      await recordAudit({
        db,
        entries: [{ action: "sign_out", actor: { id: user.id, label: user.email, role: user.role } }],
      });
    }
    return response;
  } catch (error) {
    return errorResponse(error, "POST /api/auth");
  }
}
