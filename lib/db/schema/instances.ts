import { index, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Server processes running the runtime. `id` is random per process and is what `runs.owner` holds; hostname and pid
 * are labels. A run's owner is provably gone before its lease expires only when its row was written in this machine's
 * boot and pid namespace and that pid no longer exists (a crash or a restart on this machine). Hostname alone proves
 * nothing: replicas in separate containers share one and are all pid 1, and the root pid namespace has the same id on
 * every Linux host — hence the boot id.
 */
export const instances = pgTable(
  "instances",
  {
    id: text("id").primaryKey(),
    hostname: text("hostname").notNull(),
    pid: integer("pid").notNull(),
    /** `/proc/sys/kernel/random/boot_id`: this boot of this machine (containers share their host's). Null off Linux. */
    bootId: text("boot_id"),
    /** `/proc/self/ns/pid`, e.g. `pid:[4026531836]`: the namespace `pid` belongs to. Null off Linux. */
    pidNamespace: text("pid_namespace"),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
    /** Moved by the heartbeat. */
    seenAt: timestamp("seen_at", { withTimezone: true }).notNull().defaultNow(),
    /** Set when the process drained and exited cleanly. */
    stoppedAt: timestamp("stopped_at", { withTimezone: true }),
    /**
     * Storage formats this build reads beyond its release's first (`sealed`: values sealed under a subject's key). A
     * writer uses a new format only once every live instance reads it: mid-rollout, the release before (which writes
     * no such row, so null) never meets a value it cannot read.
     */
    reads: text("reads").array(),
  },
  (t) => [index("instances_pid_scope_idx").on(t.bootId, t.pidNamespace)],
);

export type Instance = typeof instances.$inferSelect;

/**
 * Which instances follow a thread's events from elsewhere: a stream open on one instance for a run another executes.
 * An append announces itself (NOTIFY) only when such a follower exists, so a run streams to its own client — the
 * common case — without a notification per batch. A follower refreshes its row while it follows and deletes it when it
 * stops; a row of a process that died expires. Its wake-ups have a polling fallback either way.
 */
export const threadFollowers = pgTable(
  "thread_followers",
  {
    threadId: text("thread_id").notNull(),
    instanceId: text("instance_id").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.instanceId] })],
);
