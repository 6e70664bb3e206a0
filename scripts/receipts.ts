/**
 * `npm run receipts -- verify`: check every decision receipt offline — its signature under the key it names
 * (RECEIPT_KEYS, or the key derived from the session secret), against DATABASE_URL or the embedded database. Prints
 * how many receipts it checked and each one that does not verify; exits 1 when any does not, 2 on a usage error.
 */
import { openPglite, openPostgres } from "@/lib/db/open";
import { verifyReceipts } from "@/lib/delivery/receipts";
import { env } from "@/lib/platform/env";
import { usageExit } from "./cli";

const USAGE = "usage: npm run receipts -- verify";
const [command, ...rest] = process.argv.slice(2);
if (command !== "verify" || rest.length > 0)
  usageExit("receipts", USAGE, `unknown command ${command ?? "(none)"}`);

const database = env.DATABASE_URL
  ? openPostgres(env.DATABASE_URL, { max: 2, pooled: env.DATABASE_POOLER === "transaction" })
  : await openPglite(env.PGLITE_DATA_DIR);
try {
  const { receipts, problems } = await verifyReceipts({ db: database.db });
  for (const p of problems) console.log(`receipt ${p.id} (thread ${p.threadId}): ${p.problem}`);
  console.log(`${receipts} receipts checked, ${problems.length} do not verify`);
  process.exitCode = problems.length > 0 ? 1 : 0;
} finally {
  await database.close();
}
