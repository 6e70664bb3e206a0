/**
 * Audit probe (issue 31): how many audited transactions per second 16 clients commit with the audit trail's hash chain
 * and without it, side by side in one run, with and without 2 ms of other work in the transaction after the insert.
 * Each transaction is BEGIN · INSERT one audit row · (pg_sleep 2 ms) · COMMIT, from an empty trail each round. "With"
 * runs, as every server does, the chainer (`audit_log_chain_pending`) on its interval; "without" does not. Rounds alternate with / without so the machine's noise falls on both. After each round with
 * the chain, the chainer catches up and the trail must verify with every row chained.
 *
 *   npm run bench:audit               3 rounds of 4 s per case
 *   npm run bench:audit -- --quick    1 round of 1.5 s (smoke)
 *
 * One fresh Postgres database, dropped at the end. stdout is the report; its last line is one JSON object.
 */
import os from "node:os";
import pg from "pg";
import { createTestDatabase } from "@/e2e/support/pg";
import { migrateDatabase } from "@/lib/db/migrate";
import { openPostgres } from "@/lib/db/open";
import { round } from "./measure";

const quick = process.argv.includes("--quick");
const CLIENTS = 16;
const ROUNDS = quick ? 1 : 3;
const SECONDS = quick ? 1.5 : 4;
const CHAIN_EVERY_MS = Number(process.env.AUDIT_CHAIN_MS ?? 1000);

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main() {
  const target = await createTestDatabase("bench_audit");
  const database = openPostgres(target.url, { max: 4 });
  try {
    await migrateDatabase(database);
    await database.pool!.end();
    const pool = new pg.Pool({ connectionString: target.url, max: CLIENTS + 2 });
    const hasChainer = (await pool.query("SELECT 1 FROM pg_proc WHERE proname = 'audit_log_chain_pending'"))
      .rowCount;

    let problems = 0;
    let unchained = 0;
    /**
     * Transactions committed by CLIENTS clients in SECONDS, from an empty trail each time. With the chain, the chainer
     * runs alongside; without, it does not. After a round with the chain, the chainer catches up and
     * the trail is verified: problems and rows left unchained are added up for the report.
     */
    async function probe(chain: boolean, workMs: number): Promise<number> {
      await pool.query(
        `ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_truncate;
         ALTER TABLE audit_chain DISABLE TRIGGER audit_chain_no_truncate;
         TRUNCATE audit_log, audit_chain;
         UPDATE audit_chain_state SET head_seq = 0, head_hash = NULL, watermark = 0, candidate = NULL,
           candidate_running = NULL;
         ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_truncate;
         ALTER TABLE audit_chain ENABLE TRIGGER audit_chain_no_truncate`,
      );
      const end = Date.now() + SECONDS * 1000;
      let stopChainer = false;
      const chainer = (async () => {
        if (!chain || !hasChainer) return;
        while (!stopChainer) {
          await pool.query("SELECT audit_log_chain_pending(5000)");
          await new Promise((r) => setTimeout(r, CHAIN_EVERY_MS));
        }
      })();
      let done = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, i) => {
          const client = await pool.connect();
          try {
            while (Date.now() < end) {
              await client.query("BEGIN");
              await client.query(
                "INSERT INTO audit_log (action, actor_id, actor, actor_role, detail) VALUES ('sign_in', $1, $2, 'operator', $3)",
                [`bench-${i}`, `bench-${i}@bench.local`, JSON.stringify({ client: i, n: done })],
              );
              if (workMs > 0) await client.query(`SELECT pg_sleep(${workMs / 1000})`);
              await client.query("COMMIT");
              done += 1;
            }
          } finally {
            client.release();
          }
        }),
      );
      stopChainer = true;
      await chainer;
      if (chain && hasChainer) {
        await pool.query("SELECT audit_log_chain_pending(1000000)");
        const verified = await pool.query("SELECT count(*)::int AS n FROM audit_log_verify()");
        const left = await pool.query(
          "SELECT count(*)::int AS n FROM audit_log a WHERE NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.audit_id = a.id)",
        );
        problems += verified.rows[0].n as number;
        unchained += left.rows[0].n as number;
      }
      return done / SECONDS;
    }

    const cases = [0, 2];
    const results: Record<string, { with: number[]; without: number[] }> = {};
    for (const work of cases) {
      const r = { with: [] as number[], without: [] as number[] };
      results[`${work}ms`] = r;
      for (let round_ = 0; round_ < ROUNDS; round_++) {
        // Alternate which goes first, so a warming or cooling machine favours neither.
        const order = round_ % 2 === 0 ? [true, false] : [false, true];
        for (const chain of order) {
          const tps = await probe(chain, work);
          (chain ? r.with : r.without).push(tps);
          log(
            `work ${work} ms · chain ${chain ? "on " : "off"} · round ${round_ + 1}: ${Math.round(tps)} tx/s`,
          );
        }
      }
    }
    await pool.end();

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const summary = Object.fromEntries(
      Object.entries(results).map(([k, r]) => [
        k,
        {
          withChain: Math.round(median(r.with)),
          withoutChain: Math.round(median(r.without)),
          ratio: round(median(r.with) / median(r.without)),
          ratiosPerRound: r.with.map((w, i) => round(w / (r.without[i] ?? 1))),
        },
      ]),
    );
    console.log(
      `Audit probe: ${CLIENTS} clients, ${ROUNDS} × ${SECONDS} s per case, ${os.cpus().length} cores`,
    );
    console.log(
      `chainer: ${hasChainer ? `after commit, every ${CHAIN_EVERY_MS} ms` : "none (chained at insert)"}`,
    );
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
