import { authGet, authPost } from "@/lib/auth/auth-endpoint";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** better-auth's endpoints (sign-in, sign-out, session), mounted at /api/auth/*. No session token in any body. */
export const GET = route({ name: "GET /api/auth", access: "public" }, ({ request }) => authGet(request));

/** Sign-in (hardened: client address, limits, audit) and sign-out (audited); cross-site posts are refused. */
export const POST = route({ name: "POST /api/auth", access: "public" }, ({ request, database: { db } }) =>
  authPost({ db, request }),
);
