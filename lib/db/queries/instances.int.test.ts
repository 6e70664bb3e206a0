import { sql } from "drizzle-orm";
import pg from "pg";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { rowsOf } from "../rows";
import { INSTANCES_CHANNEL } from "../vault";
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

/*
 * An instance coming live is announced by the database itself (migration 0046), whatever release it runs: servers
 * forget their answer to "may I seal?" at once instead of writing, for up to 5 s, what it cannot read.
 */
describe("an instance coming live, on postgres", () => {
  let opened: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    opened = await openBackend("postgres");
  });
  afterAll(() => opened?.close());

  it("is announced on hitl_instances when it registers, restarts after a stop or reads other formats; a heartbeat is not", async () => {
    const listener = new pg.Client({ connectionString: opened.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (m) => {
      if (m.channel === INSTANCES_CHANNEL) heard.push(m.payload ?? "");
    });
    await listener.query(`LISTEN ${INSTANCES_CHANNEL}`);
    const settle = async () => {
      // A notification reaches a listener after its commit: a round trip on the listening connection flushes it.
      await listener.query("SELECT 1");
      await new Promise((r) => setTimeout(r, 100));
    };
    try {
      const run = (text: string) => opened.database.sql.query(text);
      // An instance of a release before (it reads checkpoints sealed, nothing more) registers.
      await run(
        "INSERT INTO instances (id, hostname, pid, seen_at, reads) VALUES ('old', 'h', 1, now(), ARRAY['sealed'])",
      );
      await settle();
      expect(heard).toEqual(["old"]);
      // Its heartbeat: nothing.
      await run("UPDATE instances SET seen_at = now() WHERE id = 'old'");
      await settle();
      expect(heard).toEqual(["old"]);
      // It stops, then starts again; an instance seen long ago comes back; one starts reading more.
      await run("UPDATE instances SET stopped_at = now() WHERE id = 'old'");
      await run("UPDATE instances SET stopped_at = NULL, seen_at = now() WHERE id = 'old'");
      await run("UPDATE instances SET seen_at = now() - interval '10 minutes' WHERE id = 'old'");
      await run("UPDATE instances SET seen_at = now() WHERE id = 'old'");
      await run("UPDATE instances SET reads = ARRAY['sealed', 'sealed-rows'] WHERE id = 'old'");
      await settle();
      expect(heard).toEqual(["old", "old", "old", "old"]);
      // This release's own registration too.
      await registerInstance({
        db: opened.database.db,
        instance: { id: "new", hostname: "h", pid: 2, bootId: null, pidNamespace: null },
      });
      await settle();
      expect(heard.at(-1)).toBe("new");
    } finally {
      await listener.end();
    }
  });
});
