import fc from "fast-check";
import { withMigratedDatabase } from "@/e2e/support/migrated-database";
import { env } from "@/lib/platform/env";
import { instanceId } from "../../platform/instance";
import { takeOverExpiredRuns } from "./recovery";

/*
 * The sweeper claims runs whose lease expired. A run this process started after the sweep's snapshot of what executes
 * here can be claimed too (its lease, counted from its claim transaction's start, ran out by its commit): that claim
 * renews its lease, and must not count as a crash — MAX_RUN_ATTEMPTS would end a healthy run as "crashed too often".
 */

const ctx = withMigratedDatabase("sweep");

const runShape = fc.record({
  owner: fc.constantFrom("me", "other", "none"),
  executingHere: fc.boolean(),
  attempts: fc.integer({ min: 0, max: env.MAX_RUN_ATTEMPTS + 1 }),
});

it("counts an attempt for every run it takes over, and none for a run that started here after its snapshot", async () => {
  const sql = ctx.database.pool!;
  await fc.assert(
    fc.asyncProperty(fc.array(runShape, { minLength: 1, maxLength: 8 }), async (shapes) => {
      await sql.query("DELETE FROM runs");
      await sql.query("DELETE FROM threads");
      const runs = shapes.map((shape, i) => ({
        ...shape,
        // Only a run this process owns can be executing here.
        executingHere: shape.owner === "me" && shape.executingHere,
        id: `run-${i}-${crypto.randomUUID()}`,
        threadId: `thread-${i}-${crypto.randomUUID()}`,
      }));
      for (const run of runs) {
        await sql.query(
          "INSERT INTO threads (id, title, customer_message, status) VALUES ($1, 't', 'm', 'running')",
          [run.threadId],
        );
        await sql.query(
          `INSERT INTO runs (id, thread_id, kind, status, owner, lease_expires_at, attempts)
           VALUES ($1, $2, 'input', 'running', $3, now() - interval '1 second', $4)`,
          [
            run.id,
            run.threadId,
            run.owner === "me" ? instanceId() : run.owner === "other" ? "another-instance" : null,
            run.attempts,
          ],
        );
      }
      const started: string[] = [];
      const abandoned: string[] = [];
      await takeOverExpiredRuns(
        ctx.database,
        { everyActive: false },
        // The worst case: every run executing here started after the snapshot.
        { snapshot: () => [], has: (id) => runs.some((r) => r.id === id && r.executingHere) },
        {
          start: (run) => void started.push(run.id),
          abandon: async (run) => void abandoned.push(run.id),
        },
      );
      const { rows } = await sql.query<{ id: string; attempts: number; owner: string; leased: boolean }>(
        "SELECT id, attempts, owner, lease_expires_at > now() AS leased FROM runs",
      );
      const after = new Map(rows.map((r) => [r.id, r]));
      for (const run of runs) {
        const row = after.get(run.id)!;
        expect(row.owner).toBe(instanceId());
        expect(row.leased).toBe(true);
        if (run.executingHere) {
          expect(row.attempts).toBe(run.attempts);
          expect(started).not.toContain(run.id);
          expect(abandoned).not.toContain(run.id);
        } else {
          expect(row.attempts).toBe(run.attempts + 1);
          const crashedTooOften = run.attempts + 1 > env.MAX_RUN_ATTEMPTS;
          expect(abandoned.includes(run.id)).toBe(crashedTooOften);
          expect(started.includes(run.id)).toBe(!crashedTooOften);
        }
      }
    }),
    { numRuns: 40 },
  );
});
