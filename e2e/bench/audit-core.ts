import pg from "pg";
import { round } from "./measure";

/*
 * The audit probe's measurement (issue 31), shared by `npm run bench:audit` and a small run in the test suite: CLIENTS
 * clients commit audited transactions for SECONDS, with the chainer running and without it, alternating, and with and
 * without WORK ms of other work after the insert. Each transaction is BEGIN · INSERT one audit row · (pg_sleep) ·
 * COMMIT, from an empty trail each round. After each round with the chain, the chainer catches up and the trail is
 * verified: problems and rows left unchained are counted.
 */

export interface AuditProbeOptions {
  url: string;
  clients: number;
  rounds: number;
  seconds: number;
  /** How often the chainer runs while the clients write (the server's AUDIT_CHAIN_MS). */
  chainEveryMs: number;
  /** Milliseconds of other work after the insert, one case each. */
  cases: number[];
  log?: (line: string) => void;
}

export interface AuditProbeResult {
  summary: Record<
    string,
    { withChain: number; withoutChain: number; ratio: number; ratiosPerRound: number[] }
  >;
  problems: number;
  unchained: number;
  transactions: number;
}

/** Run the probe on a migrated database at `url` (its audit trail is emptied between rounds). */
export async function runAuditProbe(options: AuditProbeOptions): Promise<AuditProbeResult> {
  const { url, rounds: ROUNDS, seconds: SECONDS, chainEveryMs: CHAIN_EVERY_MS, cases } = options;
  const CLIENTS = options.clients;
  const log = options.log ?? (() => {});
  const pool = new pg.Pool({ connectionString: url, max: CLIENTS + 2 });
  let transactions = 0;
  try {
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
        if (!chain) return;
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
      if (chain) {
        await pool.query("SELECT audit_log_chain_pending(1000000)");
        const verified = await pool.query("SELECT count(*)::int AS n FROM audit_log_verify()");
        const left = await pool.query(
          "SELECT count(*)::int AS n FROM audit_log a WHERE NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.audit_id = a.id)",
        );
        problems += verified.rows[0].n as number;
        unchained += left.rows[0].n as number;
      }
      transactions += done;
      return done / SECONDS;
    }

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
    return { summary, problems, unchained, transactions };
  } finally {
    await pool.end();
  }
}
