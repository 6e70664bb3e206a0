import { join } from "node:path";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { migrateDatabase } from "@/lib/db/migrate";
import { type Database, openPglite, openPostgres } from "@/lib/db/open";
import { createTestDatabase } from "./pg";

export type Backend = "postgres" | "pglite";

/**
 * Open a migrated, empty database of the given kind; `close()` also drops / discards it. `migrationsFolder` migrates
 * it with another folder (an earlier release's migrations).
 */
export async function openBackend(
  kind: Backend,
  options: { icuLocale?: string; migrationsFolder?: string } = {},
): Promise<{ database: Database; close(): Promise<void>; url?: string }> {
  const folder = options.migrationsFolder ?? join(process.cwd(), "drizzle");
  if (kind === "pglite") {
    const database = await openPglite("memory://");
    await migrateDatabase(database, folder);
    return { database, close: () => database.close() };
  }
  const created = await createTestDatabase("cf", options);
  const database = openPostgres(created.url, { max: 10 });
  await migrateDatabase(database, folder);
  return {
    database,
    url: created.url,
    async close() {
      await database.close();
      await created.drop();
    },
  };
}

/**
 * Test initializer for the official conformance kit. The name is ours, so the kit skips nothing
 * (it only skips for the names of savers it knows to be incomplete).
 */
export function initializer(kind: Backend) {
  let backend: Awaited<ReturnType<typeof openBackend>> | undefined;
  return {
    checkpointerName: `hitl-console DrizzleCheckpointSaver (${kind})`,
    beforeAllTimeout: 120_000,
    async beforeAll() {
      backend = await openBackend(kind);
    },
    async afterAll() {
      await backend?.close();
    },
    createCheckpointer() {
      if (!backend) throw new Error("backend not open");
      return new DrizzleCheckpointSaver(backend.database.sql);
    },
    async destroyCheckpointer() {
      // Listing without a thread id must see only the current test's checkpoints.
      await backend?.database.sql.query(
        "TRUNCATE checkpoint.checkpoints, checkpoint.checkpoint_blobs, checkpoint.checkpoint_writes",
      );
    },
  };
}
