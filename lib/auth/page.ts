import "server-only";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { hasRole, type Role, type SessionUser } from "../contract/roles";
import { databaseFault } from "../platform/database-faults";
import { PAGE_PATH_HEADER } from "../platform/http/csp";
import { sessionUser } from "./principal";

const UNAVAILABLE = Symbol("database unavailable");

/**
 * A page's signed-in user: without a session, off to the sign-in page (coming back to `path` afterwards); below
 * `role`, a plain refusal page. Route handlers guard the data themselves; this only keeps pages honest.
 */
export async function requirePageUser(path: string, role: Role = "viewer"): Promise<SessionUser> {
  const read = await sessionUser(await headers()).catch((error: unknown) => {
    // The database is failing over, restarting or out of connections: not a bug in this page. Off to a page that says
    // so with a 503 and comes back here by itself (Next renders a failed page as a bare 500).
    if (databaseFault(error)) return UNAVAILABLE;
    throw error;
  });
  if (typeof read === "symbol") redirect(unavailablePage(path));
  const user = read;
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

/** The page that says the database is not answering, coming back to `path` (a 503: app/unavailable/route.ts). */
function unavailablePage(path: string): string {
  return `/unavailable?next=${encodeURIComponent(path)}`;
}

/**
 * A page whose reads may meet a database that is failing over, restarting or out of connections: instead of the bare
 * 500 Next renders for a failed page, it goes to the 503 page that comes back by itself (to the address proxy.ts
 * noted). Anything else — a bug, `notFound()`, a redirect — goes on as thrown.
 */
export function answeringPage<P, T = ReactNode>(render: (props: P) => Promise<T>): (props: P) => Promise<T> {
  return async (props: P) => {
    try {
      return await render(props);
    } catch (error) {
      if (!databaseFault(error)) throw error;
      redirect(unavailablePage((await headers()).get(PAGE_PATH_HEADER) ?? "/"));
    }
  };
}
