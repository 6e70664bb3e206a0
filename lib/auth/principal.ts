import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { AppDb } from "@/lib/db/client";
import { hasRole, isRole, type Principal, type Role, type SessionUser } from "../contract/roles";
import { principalForKey } from "./api-keys";
import { getAuth } from "./auth";
import { cachedSessionUser } from "./session-cache";

/**
 * Who sent a request: an intake key (`Authorization: Bearer hitl_…`) or the signed-in user of the session cookie.
 * A presented key that is not valid is refused outright (it never falls back to a cookie).
 */
export async function authenticate({
  db,
  request,
}: {
  db: AppDb;
  request: Request;
}): Promise<Principal | null> {
  const authorization = request.headers.get("authorization");
  if (authorization) {
    const match = authorization.match(/^Bearer\s+(\S+)$/i);
    if (!match?.[1]) throw new AppError("unauthorized:api_key", "Authorization must be `Bearer <API key>`.");
    return principalForKey({ db, key: match[1] });
  }
  const user = await sessionUser(request.headers);
  return user ? { kind: "user", id: user.id, label: user.email, role: user.role } : null;
}

/** The signed-in, enabled user of these request headers, or null (verified sessions are cached: session-cache.ts). */
export async function sessionUser(headers: Headers): Promise<SessionUser | null> {
  return cachedSessionUser(headers.get("cookie"), async () => {
    const auth = await getAuth();
    const session = await auth.api.getSession({ headers });
    if (!session) return null;
    const user = session.user as typeof session.user & { role?: unknown; disabled?: unknown };
    if (user.disabled === true || !isRole(user.role)) return null;
    return {
      user: { id: user.id, email: user.email, name: user.name, role: user.role },
      expiresAt: new Date(session.session.expiresAt),
    };
  });
}

/**
 * The request's user, who must have at least `role`: 401 `unauthorized:session` without a session, 403
 * `forbidden:role` below it, 403 `forbidden:api_key_scope` for an intake key (keys only file tickets).
 */
export async function requireRole({
  db,
  request,
  role,
}: {
  db: AppDb;
  request: Request;
  role: Role;
}): Promise<Principal> {
  const principal = await authenticate({ db, request });
  return checkRole(principal, role);
}

/**
 * The access check of `requireRole` on a principal already read (the route wrapper reads it
 * first, so a thread outside the user's teams is refused as unknown before their role is looked at).
 */
export function admit(principal: Principal | null, access: Role | { intakeOr: Role }): Principal {
  if (typeof access === "object") {
    if (principal?.kind === "key" && principal.scope === "intake") return principal;
    return checkRole(principal, access.intakeOr);
  }
  return checkRole(principal, access);
}

function checkRole(principal: Principal | null, role: Role): Principal {
  if (!principal) throw new AppError("unauthorized:session", "Sign in first.");
  if (principal.kind === "key") {
    throw new AppError("forbidden:api_key_scope", "An intake key may only file tickets and start them.");
  }
  if (!hasRole(principal.role, role)) {
    throw new AppError(
      "forbidden:role",
      `This needs the ${role} role; you are ${principal.role ?? "no role"}.`,
      {
        needed: role,
        role: principal.role,
      },
    );
  }
  return principal;
}
