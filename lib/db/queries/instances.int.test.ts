import { sql } from "drizzle-orm";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { rowsOf } from "../rows";
import { followThread } from "./followers";
import { registerInstance } from "./instances";

/*
 * Follower rows of dead processes: a live follower refreshes its row and deletes it when it stops, so an expired row is
 * a dead process's. An instance's start removes every one of them, whatever thread it is for; rows still in force stay.
 */
const backends: Backend[] = ["postgres", "pglite"];

describe.each(backends)("an instance's start, on %s", (kind) => {
  let opened: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    opened = await openBackend(kind);
  });
  afterAll(() => opened?.close());

  it("removes the follower rows that expired, on any thread, and keeps those in force", async () => {
    const { db } = opened.database;
    await followThread({ db, threadId: "thread-of-a-dead-process", instanceId: "dead", ttlMs: 30_000 });
    await followThread({ db, threadId: "thread-followed-now", instanceId: "alive", ttlMs: 30_000 });
    await db.execute(
      sql`UPDATE thread_followers SET expires_at = now() - interval '1 hour' WHERE instance_id = 'dead'`,
    );
    await registerInstance({
      db,
      instance: { id: "starting", hostname: "h", pid: 1, bootId: null, pidNamespace: null },
    });
    const left = rowsOf<{ thread_id: string; instance_id: string }>(
      await db.execute(sql`SELECT thread_id, instance_id FROM thread_followers ORDER BY thread_id`),
    );
    expect(left).toEqual([{ thread_id: "thread-followed-now", instance_id: "alive" }]);
  });
});
