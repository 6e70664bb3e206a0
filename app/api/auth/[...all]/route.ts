import { getAuth } from "@/lib/auth/auth";
import { sessionUser } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { errorResponse } from "@/lib/errors";
import { assertSameOrigin } from "@/lib/http";

export const dynamic = "force-dynamic";

/** better-auth's endpoints (sign-in, sign-out, session), mounted at /api/auth/*. */
export async function GET(request: Request) {
  try {
    return await (await getAuth()).handler(request);
  } catch (error) {
    return errorResponse(error, "GET /api/auth");
  }
}

/**
 * The session lives in an httpOnly cookie; better-auth also echoes its token in the sign-in body, where page
 * scripts could read it. Drop it.
 */
async function withoutToken(response: Response): Promise<Response> {
  if (!response.ok || !response.headers.get("content-type")?.includes("application/json")) return response;
  const body = (await response.json()) as Record<string, unknown>;
  delete body.token;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

export async function POST(request: Request) {
  try {
    assertSameOrigin(request);
    const auth = await getAuth();
    const path = new URL(request.url).pathname;
    if (path.endsWith("/sign-in/email")) return withoutToken(await auth.handler(request));
    if (!path.endsWith("/sign-out")) return await auth.handler(request);
    // Sign-out goes into the audit trail with who it was.
    const user = await sessionUser(request.headers);
    const response = await auth.handler(request);
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
