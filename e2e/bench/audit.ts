/**
 * Audit probe (issue 31): how many audited transactions per second 16 clients commit with the audit trail's hash chain
 * and without it, side by side in one run, with and without 2 ms of other work in the transaction after the insert.
 * Each transaction is BEGIN · INSERT one audit row · (pg_sleep 2 ms) · COMMIT, from an empty trail each round. "With"
 * runs, as every server does, the chainer (`audit_log_chain_pending`) on its interval; "without" does not. Rounds
 * alternate with / without so the machine's noise falls on both. After each round with the chain, the chainer catches
 * up and the trail must verify with every row chained. The measurement is ./audit-core.ts; the test suite runs it small
 * (lib/db/audit-chain.int.test.ts).
 *
 *   npm run bench:audit               3 rounds of 4 s per case
 *   npm run bench:audit -- --quick    1 round of 1.5 s (smoke)
 *
 * One fresh Postgres database, dropped at the end. stdout is the report; its last line is one JSON object.
 */
import os from "node:os";
import { createTestDatabase } from "@/e2e/support/pg";
import { migrateDatabase } from "@/lib/db/migrate";
import { openPostgres } from "@/lib/db/open";
import { runAuditProbe } from "./audit-core";

const quick = process.argv.includes("--quick");
const CLIENTS = 16;
const ROUNDS = quick ? 1 : 3;
const SECONDS = quick ? 1.5 : 4;
const CHAIN_EVERY_MS = Number(process.env.AUDIT_CHAIN_MS ?? 1000);

async function main() {
  const target = await createTestDatabase("bench_audit");
  const database = openPostgres(target.url, { max: 4 });
  try {
    await migrateDatabase(database);
    await database.pool!.end();
    const { summary, problems, unchained } = await runAuditProbe({
      url: target.url,
      clients: CLIENTS,
      rounds: ROUNDS,
      seconds: SECONDS,
      chainEveryMs: CHAIN_EVERY_MS,
      cases: [0, 2],
      log: (line) => process.stderr.write(`${line}\n`),
    });
    console.log(
      `Audit probe: ${CLIENTS} clients, ${ROUNDS} × ${SECONDS} s per case, ${os.cpus().length} cores`,
    );
    console.log(`chainer: after commit, every ${CHAIN_EVERY_MS} ms`);
    for (const [k, s] of Object.entries(summary)) {
      console.log(
        `${k} of work after the insert: ${s.withChain} tx/s with the chain, ${s.withoutChain} without — ratio ${s.ratio} (rounds ${s.ratiosPerRound.join(", ")})`,
      );
    }
    console.log(
      `trail after each round with the chain, once the chainer caught up: ${problems} problems, ${unchained} rows unchained`,
    );
    console.log(JSON.stringify({ bench: "audit", clients: CLIENTS, quick, summary, problems, unchained }));
    if (problems > 0 || unchained > 0) process.exitCode = 1;
  } finally {
    await target.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
