/**
 * Roles, lowest to highest; each includes what the ones below it may do. Isomorphic: the server checks them on
 * every route, the pages use them only to hide what a role cannot do.
 *
 * - viewer: reads everything.
 * - operator: also files tickets and decides ordinary interrupts.
 * - supervisor: also approves large refunds, forks threads and prunes history.
 * - admin: also manages users and intake keys.
 */
export const ROLES = ["viewer", "operator", "supervisor", "admin"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** Whether `role` may do what `needed` may. */
export function hasRole(role: Role | null | undefined, needed: Role): boolean {
  return role != null && ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** Who is acting on a request or a job: a signed-in user, an intake API key, or the server itself. */
export interface Principal {
  kind: "user" | "key" | "system";
  /** A user id, `key:<id>`, or `system:<name>`: what the ledger and the four-eyes checks compare. */
  id: string;
  /** Readable: the user's email, the key's name, the job's name. */
  label: string;
  /** Users and system jobs have a role; keys have a scope instead. */
  role: Role | null;
  scope?: "intake";
}

/** The signed-in user as pages see it. */
export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}
