import "server-only";
import { type AnyColumn, and, eq, inArray, lt, ne, notExists, type SQL, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { ACTIVE_RUN_STATUSES } from "@/lib/contract/wire";
import { instances, runs, threadFollowers } from "../schema";
import type { Queryable } from "../tx";

/**
 * The storage formats this build reads (see `instances.reads`): `sealed`, checkpoint values and writes sealed under a
 * subject's key; `sealed-rows`, the thread's rows too (events, inputs, emails, effects' payloads); `sealed-records`,
 * the rest of what is about a customer (the ticket, orders, accounts, the audit trail's words, notifications, errors).
 */
export const READS = ["sealed", "sealed-rows", "sealed-records"] as const;

/** Rows of instances unseen for this long (and owning no active run) are deleted when another instance registers. */
const FORGET_AFTER = sql`interval '7 days'`;

/**
 * Record this process as an instance (idempotent: a retried start moves `seen_at`), and forget long-gone ones — and
 * every expired follower row: a follower refreshes its row while it follows and deletes it when it stops, so an expired
 * one is a dead process's, which nothing else removes unless its thread is followed again.
 */
export async function registerInstance({
  db,
  instance,
}: {
  db: Queryable;
  instance: { id: string; hostname: string; pid: number; bootId: string | null; pidNamespace: string | null };
}): Promise<void> {
  await db
    .insert(instances)
    .values({ ...instance, reads: [...READS] })
    .onConflictDoUpdate({
      target: instances.id,
      set: { seenAt: sql`now()`, stoppedAt: null, reads: [...READS] },
    });
  await db.delete(instances).where(
    and(
      lt(instances.seenAt, sql`now() - ${FORGET_AFTER}`),
      notExists(
        db
          .select({ one: sql`1` })
          .from(runs)
          .where(and(eq(runs.owner, instances.id), inArray(runs.status, [...ACTIVE_RUN_STATUSES]))),
      ),
    ),
  );
  await db.delete(threadFollowers).where(lt(threadFollowers.expiresAt, sql`now()`));
}

/** The heartbeat of an instance (whether or not it executes runs). */
export async function touchInstance({ db, id }: { db: Queryable; id: string }): Promise<void> {
  await db.update(instances).set({ seenAt: sql`now()` }).where(eq(instances.id, id));
}

export async function markInstanceStopped({ db, id }: { db: Queryable; id: string }): Promise<void> {
  await db.update(instances).set({ stoppedAt: sql`now()` }).where(eq(instances.id, id));
}

/** Where to look for another instance of this machine: its boot and pid namespace, and this process's own id. */
export interface LocalScope {
  db: Queryable;
  bootId: string;
  pidNamespace: string;
  except: string;
}

/**
 * Other instances of this machine's boot and pid namespace that hold a claim, with their pids: the only owners whose
 * death this process can check (`kill(pid, 0)` means something only inside the same pid namespace). `owner` is the
 * claiming table's owner column and `holding` says which of its rows count as claims.
 */
export async function listLocalOwners({
  db,
  bootId,
  pidNamespace,
  except,
  table,
  owner,
  holding,
}: LocalScope & { table: PgTable; owner: AnyColumn; holding: SQL }): Promise<{ id: string; pid: number }[]> {
  return db
    .selectDistinct({ id: instances.id, pid: instances.pid })
    .from(instances)
    .innerJoin(table, eq(owner, instances.id))
    .where(
      and(
        eq(instances.bootId, bootId),
        eq(instances.pidNamespace, pidNamespace),
        ne(instances.id, except),
        holding,
      ),
    );
}

/** Other instances of this machine (see {@link listLocalOwners}) that own active runs. */
export function listLocalRunOwners(scope: LocalScope): Promise<{ id: string; pid: number }[]> {
  return listLocalOwners({
    ...scope,
    table: runs,
    owner: runs.owner,
    holding: inArray(runs.status, [...ACTIVE_RUN_STATUSES]) as SQL,
  });
}
