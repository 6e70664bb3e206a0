import type { SqlClient } from "@/lib/db/sql-client";

/**
 * Until some session of this database waits for a lock (`pg_stat_activity`), at most ~5 s: a race test holds one
 * transaction open and uses this to know the other has reached the lock before it lets the first commit.
 */
export async function untilWaitingOnLock(sql: SqlClient): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const [waiting] = await sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if ((waiting?.n ?? 0) > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A promise and the function that settles it: the test opens a gate when the race is in place. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
