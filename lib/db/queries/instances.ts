import "server-only";
import { and, eq, inArray, lt, ne, notExists, sql } from "drizzle-orm";
import { ACTIVE_RUN_STATUSES } from "@/lib/wire";
import { instances, runs } from "../schema";
import type { Queryable } from "../tx";

/** Rows of instances unseen for this long (and owning no active run) are deleted when another instance registers. */
const FORGET_AFTER = sql`interval '7 days'`;

/** Record this process as an instance (idempotent: a retried start moves `seen_at`), and forget long-gone ones. */
export async function registerInstance({
  db,
  instance,
}: {
  db: Queryable;
  instance: { id: string; hostname: string; pid: number; bootId: string | null; pidNamespace: string | null };
}): Promise<void> {
  await db
    .insert(instances)
    .values(instance)
    .onConflictDoUpdate({ target: instances.id, set: { seenAt: sql`now()`, stoppedAt: null } });
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
}

/** The heartbeat of an instance (whether or not it executes runs). */
export async function touchInstance({ db, id }: { db: Queryable; id: string }): Promise<void> {
  await db.update(instances).set({ seenAt: sql`now()` }).where(eq(instances.id, id));
}

export async function markInstanceStopped({ db, id }: { db: Queryable; id: string }): Promise<void> {
  await db.update(instances).set({ stoppedAt: sql`now()` }).where(eq(instances.id, id));
}

/**
 * Other instances of this machine's boot and pid namespace that own active runs, with their pids: the only owners
 * whose death this process can check (`kill(pid, 0)` means something only inside the same pid namespace).
 */
export async function listLocalRunOwners({
  db,
  bootId,
  pidNamespace,
  except,
}: {
  db: Queryable;
  bootId: string;
  pidNamespace: string;
  except: string;
}): Promise<{ id: string; pid: number }[]> {
  return db
    .selectDistinct({ id: instances.id, pid: instances.pid })
    .from(instances)
    .innerJoin(runs, eq(runs.owner, instances.id))
    .where(
      and(
        eq(instances.bootId, bootId),
        eq(instances.pidNamespace, pidNamespace),
        ne(instances.id, except),
        inArray(runs.status, [...ACTIVE_RUN_STATUSES]),
      ),
    );
}
