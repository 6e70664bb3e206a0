import { runAuditProbe } from "@/e2e/bench/audit-core";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { createTestDatabase } from "@/e2e/support/pg";
import { makeRedactor } from "@/lib/runtime/retention/redact";
import { migrateDatabase } from "./migrate";
import type { Database } from "./open";
import { openPostgres } from "./open";
import {
  chainAuditTrail,
  eraseAuditRows,
  listAuditOfThreads,
  recordAudit,
  verifyAuditTrail,
} from "./queries/audit";

/*
 * The audit trail's hash chain (migrations audit_chain_erasure and audit_chain_after_commit) on both backends. A row is
 * inserted plainly and chained after its commit by the chainer, so an audited transaction never waits for another; the
 * chain still verifies, any change outside the erasure function is refused or detected — a row changed or deleted, a
 * link deleted, forged or reordered, a row left unchained past the documented delay — and erasure keeps it verifying.
 */
const actor = { id: "u-1", label: "operator@test.local", role: "operator" as const };
const JANE = "t-jane";
const redactor = makeRedactor([
  { text: "Jane Roe", replacement: "[erased customer]" },
  { text: "jane.roe@example.com", replacement: "erased@erased.invalid" },
]);
/** Erase Jane from the rows of her thread, as lib/runtime/retention/erasure.ts does. */
async function erase(db: Database["db"]) {
  const rows = (await listAuditOfThreads({ db, threadIds: [JANE] })).flatMap((row) => {
    const changed: Record<string, unknown> = {};
    for (const field of ["payload", "answer", "detail"] as const) {
      const next = redactor.json(row[field]);
      if (next !== row[field]) changed[field] = next;
    }
    return Object.keys(changed).length > 0 ? [{ id: row.id, ...changed }] : [];
  });
  return eraseAuditRows({ db, threadIds: [JANE], rows, actor, detail: { customerRef: "abc" } });
}

describe.each<Backend>(["pglite", "postgres"])("audit hash chain on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let sql: Database["sql"];
  let db: Database["db"];
  beforeAll(async () => {
    backend = await openBackend(kind);
    ({ sql, db } = backend.database);
    await recordAudit({
      db,
      entries: [
        {
          action: "decision",
          actor,
          threadId: JANE,
          payload: { customer: { name: "Jane Roe", email: "jane.roe@example.com" } },
        },
        { action: "fork", actor, threadId: JANE, detail: { note: "nothing personal" } },
        { action: "run_started", actor, threadId: JANE, detail: { message: "Hi, JANE ROE here" } },
      ],
    });
  });
  afterAll(async () => {
    await backend?.close();
  });

  const links = async () =>
    (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_chain"))[0]?.n ?? 0;

  /** Change rows behind the triggers' back, as only a superuser could. */
  async function tamper(statement: string) {
    await sql.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete");
    await sql.query("ALTER TABLE audit_chain DISABLE TRIGGER audit_chain_no_update_delete");
    try {
      await sql.query(statement);
    } finally {
      await sql.query("ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update_delete");
      await sql.query("ALTER TABLE audit_chain ENABLE TRIGGER audit_chain_no_update_delete");
    }
  }

  it("inserts plainly, chains every committed row afterwards, concurrent ones too, and verifies", async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        recordAudit({ db, entries: [{ action: "sign_in", actor: { ...actor, label: `u${i}@test.local` } }] }),
      ),
    );
    // Nothing was chained on the way in: the insert holds no lock and writes no link.
    expect(await links()).toBe(0);
    const result = await verifyAuditTrail({ db });
    expect(result).toEqual({ ok: true, rows: 11, problems: [] });
    const order = await sql.query<{ s: string; id: string }>(
      "SELECT seq AS s, audit_id AS id FROM audit_chain ORDER BY seq",
    );
    expect(order.map((r) => Number(r.s))).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    // A second pass finds nothing new.
    expect(await chainAuditTrail({ db })).toBe(0);
  });

  it.runIf(kind === "postgres")(
    "an audited transaction never waits for another, and a row whose transaction commits late is still chained",
    async () => {
      const slow = await backend.database.pool!.connect();
      try {
        await slow.query("BEGIN");
        await slow.query(
          "INSERT INTO audit_log (action, actor_id, actor, actor_role) VALUES ('sign_in', 'u-slow', 'slow@test.local', 'operator')",
        );
        // While that transaction holds its audit row uncommitted, others insert and commit at once (the old chain's
        // lock made them wait for its commit), and the chainer runs past them several times.
        const fast = recordAudit({
          db,
          entries: [{ action: "sign_in", actor: { ...actor, label: "fast@test" } }],
        });
        const waited = await Promise.race([
          fast.then(() => "committed"),
          new Promise((r) => setTimeout(() => r("waited"), 3_000)),
        ]);
        expect(waited).toBe("committed");
        for (let i = 0; i < 4; i++) {
          await recordAudit({
            db,
            entries: [{ action: "sign_in", actor: { ...actor, label: `later${i}@test` } }],
          });
          await chainAuditTrail({ db });
        }
        const [state] = await sql.query<{ watermark: string }>(
          "SELECT watermark FROM audit_chain_state WHERE id = 1",
        );
        const [seen] = await sql.query<{ id: string | null }>(
          "SELECT max(id) AS id FROM audit_log WHERE actor_id = 'u-slow'",
        );
        const own = await slow.query<{ id: string }>("SELECT id FROM audit_log WHERE actor_id = 'u-slow'");
        // Not visible to others yet, so not chained; and the watermark has not passed its id, whatever came after.
        expect(seen?.id ?? null).toBeNull();
        expect(Number(state?.watermark)).toBeLessThan(Number(own.rows[0]?.id));
        await slow.query("COMMIT");
      } finally {
        slow.release();
      }
      expect(await verifyAuditTrail({ db })).toMatchObject({ ok: true, problems: [] });
      const [chained] = await sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM audit_chain c JOIN audit_log a ON a.id = c.audit_id WHERE a.actor_id = 'u-slow'",
      );
      expect(chained?.n).toBe(1);
    },
  );

  it("refuses updates and deletes of the trail and its chain from everyone but the erasure function", async () => {
    await expect(sql.query("UPDATE audit_log SET actor = 'x' WHERE action = 'fork'")).rejects.toThrow(
      /append-only/,
    );
    await expect(sql.query("DELETE FROM audit_log WHERE action = 'fork'")).rejects.toThrow(/append-only/);
    await expect(
      sql.query("UPDATE audit_log SET erased_by = 1, actor = 'x' WHERE action = 'fork'"),
    ).rejects.toThrow(/append-only/);
    await expect(sql.query("UPDATE audit_chain SET row_hash = 'x' WHERE seq = 1")).rejects.toThrow(
      /append-only/,
    );
    await expect(sql.query("DELETE FROM audit_chain WHERE seq = 1")).rejects.toThrow(/append-only/);
    await expect(sql.query("TRUNCATE audit_chain")).rejects.toThrow(/append-only/);
  });

  const idOf = async (threadId: string) =>
    Number(
      (
        await sql.query<{ id: string }>("SELECT id FROM audit_log WHERE thread_id = $1 LIMIT 1", [threadId])
      )[0]?.id,
    );

  it("erasure rewrites the personal data of the subject's threads only, records itself, and the trail still verifies", async () => {
    // One row is erased before the chainer reached it: its link is made from the erased content.
    await recordAudit({
      db,
      entries: [
        { action: "decision", actor, threadId: JANE, detail: { to: "jane.roe@example.com" } },
        // Another customer's thread that names her, and a staff member whose label holds her address: never hers.
        { action: "decision", actor, threadId: "t-other", detail: { note: "Jane Roe called" } },
        { action: "sign_in", actor: { ...actor, label: "jane.roe@example.com" } },
      ],
    });
    const outside = await eraseAuditRows({
      db,
      threadIds: [JANE],
      rows: [{ id: await idOf("t-other"), detail: { note: "x" } }],
      actor,
      detail: {},
    }).catch((error: { cause?: unknown }) => error.cause ?? error);
    expect(String(outside)).toMatch(/audit row \d+ is not of the subject's threads/);
    const { erasureId, auditRows } = await erase(db);
    expect(auditRows).toBe(3);
    expect(await verifyAuditTrail({ db })).toMatchObject({ ok: true, problems: [] });
    const leaks = await sql.query<{ thread_id: string | null; actor: string }>(
      "SELECT thread_id, actor FROM audit_log WHERE concat(actor, payload, answer, detail) ~* 'jane' ORDER BY id",
    );
    expect(leaks).toEqual([
      { thread_id: "t-other", actor: actor.label },
      { thread_id: null, actor: "jane.roe@example.com" },
    ]);
    const [entry] = await sql.query<{ action: string; detail: { erased: Record<string, string> } }>(
      "SELECT action, detail FROM audit_log WHERE id = $1",
      [erasureId],
    );
    expect(entry!.action).toBe("erasure");
    expect(Object.keys(entry!.detail.erased)).toHaveLength(3);
    await expect(sql.query("DELETE FROM audit_log WHERE erased_by IS NOT NULL")).rejects.toThrow(
      /append-only/,
    );
  });

  it("detects a row changed, an erased row changed afterwards, a row deleted, a link deleted, forged or reordered, and a row left unchained", async () => {
    expect(await verifyAuditTrail({ db })).toMatchObject({ ok: true });
    const seqOf = async (where: string) =>
      Number(
        (
          await sql.query<{ s: string }>(
            `SELECT c.seq AS s FROM audit_chain c JOIN audit_log a ON a.id = c.audit_id WHERE ${where} ORDER BY c.seq LIMIT 1`,
          )
        )[0]?.s,
      );
    const last = Number((await sql.query<{ s: string }>("SELECT max(seq) AS s FROM audit_chain"))[0]?.s);
    await tamper("UPDATE audit_log SET detail = '{\"note\": \"rewritten\"}' WHERE action = 'fork'");
    await tamper(
      "UPDATE audit_log SET actor = 'someone else' WHERE erased_by IS NOT NULL AND action = 'decision'",
    );
    const signIn = await seqOf("a.action = 'sign_in'");
    await tamper(`DELETE FROM audit_log WHERE id = (SELECT audit_id FROM audit_chain WHERE seq = ${signIn})`);
    await tamper(`DELETE FROM audit_chain WHERE seq = ${signIn + 2}`);
    await tamper(`UPDATE audit_chain SET row_hash = repeat('0', 64) WHERE seq = ${signIn + 4}`);
    // Reordered: two links swap their places.
    await tamper(`UPDATE audit_chain SET seq = -1 WHERE seq = ${last - 1}`);
    await tamper(`UPDATE audit_chain SET seq = ${last - 1} WHERE seq = ${last}`);
    await tamper(`UPDATE audit_chain SET seq = ${last} WHERE seq = -1`);
    const result = await verifyAuditTrail({ db });
    expect(result.ok).toBe(false);
    const problems = new Set(result.problems.map((p) => p.problem));
    expect([...problems].sort()).toEqual([
      "chain gap before this row",
      "chained row missing",
      "content changed",
      "erased content does not match its erasure",
      "row hash mismatch",
    ]);

    // A row the chainer never reached is reported once it is older than the delay the check is given.
    await tamper(
      "INSERT INTO audit_log (action, actor_id, actor, at) VALUES ('sign_in', 'u-late', 'late@test.local', now() - interval '10 minutes')",
    );
    const late = await sql.query<{ problem: string }>(
      "SELECT problem FROM audit_log_verify(interval '5 minutes') WHERE chain_seq IS NULL",
    );
    expect(late.map((r) => r.problem)).toEqual(["not chained in time"]);
    const fresh = await sql.query<{ problem: string }>(
      "SELECT problem FROM audit_log_verify(interval '1 hour') WHERE chain_seq IS NULL",
    );
    expect(fresh).toEqual([]);
  });
});

it("the audit probe, small (npm run bench:audit): many clients write while the chainer runs, and every row ends up chained and verified", async () => {
  const target = await createTestDatabase("audit_probe");
  try {
    const database = openPostgres(target.url, { max: 2 });
    await migrateDatabase(database);
    await database.pool!.end();
    const result = await runAuditProbe({
      url: target.url,
      clients: 8,
      rounds: 1,
      seconds: 0.5,
      chainEveryMs: 100,
      cases: [0],
    });
    // Speed is the benchmark's to report (side by side, on a quiet machine); here only that it is whole.
    console.log(`[audit probe, small] ${JSON.stringify(result.summary)}`);
    expect(result.transactions).toBeGreaterThan(0);
    expect({ problems: result.problems, unchained: result.unchained }).toEqual({ problems: 0, unchained: 0 });
  } finally {
    await target.drop();
  }
}, 60_000);
