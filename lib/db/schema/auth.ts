import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();

/*
 * Sign-in tables, in the shape better-auth's Drizzle adapter reads and writes (its models user, session, account,
 * verification and rateLimit, mapped in lib/auth/auth.ts). Passwords live hashed in `auth_accounts.password`.
 */

/** An operator. `role` is viewer | operator | supervisor | admin; only an admin changes it. */
export const authUsers = pgTable("auth_users", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  email: text("email").notNull().unique(),
  emailVerified: boolean("email_verified").notNull().default(false),
  image: text("image"),
  role: text("role").notNull().default("viewer"),
  /** A disabled user cannot sign in; their sessions are revoked when they are disabled. */
  disabled: boolean("disabled").notNull().default(false),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const authSessions = pgTable(
  "auth_sessions",
  {
    id: text("id").primaryKey(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    token: text("token").notNull().unique(),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
    userId: text("user_id")
      .notNull()
      .references(() => authUsers.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("auth_sessions_user_idx").on(t.userId)],
);

export const authAccounts = pgTable(
  "auth_accounts",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    providerId: text("provider_id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => authUsers.id, { onDelete: "cascade" }),
    accessToken: text("access_token"),
    refreshToken: text("refresh_token"),
    idToken: text("id_token"),
    accessTokenExpiresAt: timestamp("access_token_expires_at", { withTimezone: true }),
    refreshTokenExpiresAt: timestamp("refresh_token_expires_at", { withTimezone: true }),
    scope: text("scope"),
    password: text("password"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("auth_accounts_user_idx").on(t.userId)],
);

export const authVerifications = pgTable(
  "auth_verifications",
  {
    id: text("id").primaryKey(),
    identifier: text("identifier").notNull(),
    value: text("value").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("auth_verifications_identifier_idx").on(t.identifier)],
);

/** Sign-in attempts per client and path (shared by every instance, unlike an in-memory counter). */
export const authRateLimits = pgTable("auth_rate_limits", {
  id: text("id").primaryKey(),
  key: text("key").notNull().unique(),
  count: integer("count").notNull(),
  lastRequest: bigint("last_request", { mode: "number" }).notNull(),
});

/**
 * API keys for systems that file tickets. Only a SHA-256 of the key is stored (keys are 256 random bits, so a slow
 * password hash adds nothing); `prefix` is the first characters, shown so a key can be recognised in lists.
 */
export const apiKeys = pgTable("api_keys", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  prefix: text("prefix").notNull(),
  keyHash: text("key_hash").notNull().unique(),
  /** What the key may do. Only `intake` exists: create tickets and start their first run. */
  scope: text("scope").notNull().default("intake"),
  createdBy: text("created_by").notNull(),
  createdAt: createdAt(),
  lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
  revokedBy: text("revoked_by"),
});

/**
 * Who did what, when: decisions, forks, prunes, sign-ins, user and key changes. Append-only: a trigger
 * (migration 0004) refuses UPDATE and DELETE, and no route writes anything but inserts.
 */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    /** decision | fork | prune | sign_in | sign_in_failed | sign_out | user_created | role_changed | user_disabled | key_issued | key_revoked */
    action: text("action").notNull(),
    /** The principal: a user id, `key:<id>`, or `system:<name>` for commands. */
    actorId: text("actor_id").notNull(),
    /** Readable: the user's email, the key's name. */
    actor: text("actor").notNull(),
    actorRole: text("actor_role"),
    threadId: text("thread_id"),
    checkpointId: text("checkpoint_id"),
    interruptId: text("interrupt_id"),
    /** What the operator was shown (an interrupt payload), and the answer given. */
    payload: jsonb("payload"),
    answer: jsonb("answer"),
    /** Anything else worth keeping (fork edits, prune counts, the user changed). */
    detail: jsonb("detail"),
    ipAddress: text("ip_address"),
    /** The erasure entry that pseudonymized this row's personal data (the one permitted change, see
     * `audit_log_erase`); its detail holds this row's content digest after the erasure. */
    erasedBy: bigint("erased_by", { mode: "number" }),
  },
  (t) => [
    index("audit_log_at_idx").on(t.at, t.id),
    index("audit_log_action_at_idx").on(t.action, t.at),
    index("audit_log_actor_at_idx").on(t.actor, t.at),
    index("audit_log_thread_idx").on(t.threadId, t.at).where(sql`${t.threadId} is not null`),
  ],
);

/**
 * The audit trail's hash chain, kept apart from the rows it chains (migration audit_chain_after_commit): a row is
 * inserted plainly, and the chainer (`audit_log_chain_pending`, run by every server every AUDIT_CHAIN_MS and before a
 * verification) appends its link after it has committed — position, digest of the row's content, and
 * sha256(previous row_hash, position, content_hash). Append-only like the trail; `audit_log_verify()` checks both.
 */
export const auditChain = pgTable(
  "audit_chain",
  {
    auditId: bigint("audit_id", { mode: "number" }).primaryKey(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    contentHash: text("content_hash").notNull(),
    rowHash: text("row_hash").notNull(),
  },
  (t) => [uniqueIndex("audit_chain_seq_idx").on(t.seq)],
);

/**
 * Where the chainer stands (one row): the chain's head, and its watermark — every audit id at or below it is chained —
 * with the candidate for the next one (the highest id handed out at the last pass, and the transactions running then:
 * once they have all ended, no row at or below it can still appear).
 */
export const auditChainState = pgTable("audit_chain_state", {
  id: integer("id").primaryKey(),
  headSeq: bigint("head_seq", { mode: "number" }).notNull().default(0),
  headHash: text("head_hash"),
  watermark: bigint("watermark", { mode: "number" }).notNull().default(0),
  candidate: bigint("candidate", { mode: "number" }),
  candidateRunning: text("candidate_running").array(),
  chainedAt: timestamp("chained_at", { withTimezone: true }),
});

export type AuthUser = typeof authUsers.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type AuditEntry = typeof auditLog.$inferSelect;
