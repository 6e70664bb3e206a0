import "server-only";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { hasRole, type Role, type SessionUser } from "../contract/roles";
import { sessionUser } from "./principal";

/**
 * A page's signed-in user: without a session, off to the sign-in page (coming back to `path` afterwards); below
 * `role`, a plain refusal page. Route handlers guard the data themselves; this only keeps pages honest.
 */
export async function requirePageUser(path: string, role: Role = "viewer"): Promise<SessionUser> {
  const user = await sessionUser(await headers());
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(path)}`);
  if (!hasRole(user.role, role)) redirect(`/not-allowed?need=${encodeURIComponent(role)}`);
  return user;
}

/** The signed-in user, if any (the layout's header). */
export async function currentUser(): Promise<SessionUser | null> {
  try {
    return await sessionUser(await headers());
  } catch {
    return null;
  }
}
