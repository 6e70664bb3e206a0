import "server-only";
import { asc, eq, sql } from "drizzle-orm";
import { AppError } from "@/lib/contract/errors";
import type { AppDb } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { authSessions, authUsers } from "@/lib/db/schema";
import { sqlState } from "@/lib/db/sql-client";
import { isRole, type Principal, type Role } from "../contract/roles";
import { getAuth } from "./auth";
import { invalidateSessions } from "./session-cache";

export interface UserView {
  id: string;
  email: string;
  name: string;
  role: Role;
  disabled: boolean;
  createdAt: string;
}

function toView(row: typeof authUsers.$inferSelect): UserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: isRole(row.role) ? row.role : "viewer",
    disabled: row.disabled,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * Create a user with an email + password account (the password is hashed by better-auth; it is never stored or
 * logged as given). 409 `conflict:user_exists` if the email is taken.
 */
export async function createUser({
  db,
  email,
  name,
  password,
  role,
  by,
}: {
  db: AppDb;
  email: string;
  name: string;
  password: string;
  role: Role;
  by: Principal;
}): Promise<UserView> {
  const auth = await getAuth();
  const ctx = await auth.$context;
  const normalized = email.trim().toLowerCase();
  if (await ctx.internalAdapter.findUserByEmail(normalized)) {
    throw new AppError("conflict:user_exists", `A user with the email ${normalized} already exists.`);
  }
  const hash = await ctx.password.hash(password);
  const user = await ctx.internalAdapter.createUser(
    { email: normalized, name, role, disabled: false, emailVerified: true },
    { method: "admin" },
  );
  await ctx.internalAdapter.linkAccount({
    userId: user.id,
    providerId: "credential",
    accountId: user.id,
    password: hash,
  });
  await recordAudit({
    db,
    entries: [{ action: "user_created", actor: by, detail: { userId: user.id, email: normalized, role } }],
  });
  const [row] = await db.select().from(authUsers).where(eq(authUsers.id, user.id));
  if (!row) throw new Error("created user not found");
  return toView(row);
}

/** The transaction advisory lock that serializes role and disable changes (also taken by migration 0006's trigger). */
const ADMIN_CHANGES_LOCK_KEY = 7_311_842_002;
/** SQLSTATE of migration 0006's refusal to remove the last enabled admin. */
const LAST_ADMIN_SQLSTATE = "HL001";

/**
 * Change a user's role, or disable them (their sessions end at once). Changes are serialized on the admin lock.
 * Taking away the last enabled admin is refused by the database (409 `conflict:last_admin`); an admin demoted or
 * disabled a moment ago by a change committed first cannot act on what they saw before (403 `forbidden:role`).
 */
export async function updateUser(change: {
  db: AppDb;
  userId: string;
  role?: Role;
  disabled?: boolean;
  by: Principal;
}): Promise<UserView> {
  try {
    const view = await applyUserChange(change);
    // Committed: this process forgets cached sessions at once (other processes hear the auth tables' NOTIFY).
    invalidateSessions();
    return view;
  } catch (error) {
    if (sqlState((error as { cause?: unknown })?.cause ?? error) === LAST_ADMIN_SQLSTATE) {
      throw new AppError(
        "conflict:last_admin",
        "There must always be an enabled admin: this change is refused.",
      );
    }
    throw error;
  }
}

async function applyUserChange({
  db,
  userId,
  role,
  disabled,
  by,
}: {
  db: AppDb;
  userId: string;
  role?: Role;
  disabled?: boolean;
  by: Principal;
}): Promise<UserView> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${ADMIN_CHANGES_LOCK_KEY})`);
    const [before] = await tx.select().from(authUsers).where(eq(authUsers.id, userId)).for("update");
    if (!before) throw new AppError("not_found:user", `User ${userId} does not exist.`);
    if (before.id === by.id && (disabled === true || (role && role !== "admin"))) {
      throw new AppError("conflict:self_demotion", "You cannot demote or disable yourself.");
    }
    const [after] = await tx
      .update(authUsers)
      .set({
        ...(role ? { role } : {}),
        ...(disabled !== undefined ? { disabled } : {}),
        updatedAt: sql`now()`,
      })
      .where(eq(authUsers.id, userId))
      .returning();
    if (!after) throw new Error("user update returned nothing");
    // After the update, so that taking away the last admin is reported as such (409) by the database first; then
    // the acting admin must still be one now that earlier changes are committed (else this rolls back with 403).
    if (by.kind === "user") {
      const [actor] = await tx
        .select({ role: authUsers.role, disabled: authUsers.disabled })
        .from(authUsers)
        .where(eq(authUsers.id, by.id));
      if (!actor || actor.disabled || actor.role !== "admin") {
        throw new AppError("forbidden:role", "This needs the admin role; yours was changed meanwhile.", {
          needed: "admin",
        });
      }
    }
    const entries = [];
    if (role && role !== before.role) {
      entries.push({
        action: "role_changed" as const,
        actor: by,
        detail: { userId, email: after.email, from: before.role, to: role },
      });
    }
    if (disabled !== undefined && disabled !== before.disabled) {
      if (disabled) await tx.delete(authSessions).where(eq(authSessions.userId, userId));
      entries.push({
        action: "user_disabled" as const,
        actor: by,
        detail: { userId, email: after.email, disabled },
      });
    }
    await recordAudit({ db: tx, entries });
    return toView(after);
  });
}

export async function listUsers({ db }: { db: AppDb }): Promise<UserView[]> {
  return (await db.select().from(authUsers).orderBy(asc(authUsers.email))).map(toView);
}

export async function findUserByEmail({ db, email }: { db: AppDb; email: string }): Promise<UserView | null> {
  const [row] = await db.select().from(authUsers).where(eq(authUsers.email, email.trim().toLowerCase()));
  return row ? toView(row) : null;
}

export async function countAdmins({ db }: { db: AppDb }): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(authUsers)
    .where(eq(authUsers.role, "admin"));
  return row?.n ?? 0;
}
