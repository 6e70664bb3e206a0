/**
 * Before a suite server starts on a fresh embedded database (E2E_DATABASE=pglite): create and migrate it in
 * PGLITE_DATA_DIR, then run the SQL file given as the first argument (the orders the specs need). Run by
 * scripts/e2e-server.mjs; the server opens the directory only after this process closed it.
 */
import { readFileSync } from "node:fs";
import { migrateDatabase } from "@/lib/db/migrate";
import { openPglite } from "@/lib/db/open";

const dir = process.env.PGLITE_DATA_DIR;
const file = process.argv[2];
if (!dir || !file)
  throw new Error("usage: PGLITE_DATA_DIR=<dir> tsx e2e/support/embedded/seed.ts <file.sql>");
const database = await openPglite(dir);
try {
  await migrateDatabase(database);
  await database.db.execute(readFileSync(file, "utf8"));
  console.log(`[e2e] embedded database migrated and seeded from ${file}`);
} finally {
  await database.close();
}
