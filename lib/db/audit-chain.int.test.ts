import { type Backend, openBackend } from "@/e2e/support/backends";
import type { Database } from "./open";
import { eraseFromAuditTrail, recordAudit, verifyAuditTrail } from "./queries/audit";

/*
 * The audit trail's hash chain (migration audit_chain_erasure) on both backends: it verifies, any change outside the
 * erasure function is refused or detected, and erasure keeps it verifying.
 */
const actor = { id: "u-1", label: "operator@test.local", role: "operator" as const };
const patterns = ["Jane Roe", "jane\\.roe@example\\.com"];
const erase = (db: Database["db"]) =>
  eraseFromAuditTrail({
    db,
    patterns,
    jsonPatterns: patterns,
    replacements: ["[erased customer]", "erased@erased.invalid"],
    actor,
    detail: { customerRef: "abc" },
  });

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
          payload: { customer: { name: "Jane Roe", email: "jane.roe@example.com" } },
        },
        { action: "fork", actor, detail: { note: "nothing personal" } },
        { action: "run_started", actor, detail: { message: "Hi, JANE ROE here" } },
      ],
    });
  });
  afterAll(async () => {
    await backend?.close();
  });

  /** Change a row behind the triggers' back, as only a superuser could. */
  async function tamper(statement: string) {
    await sql.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete");
    try {
      await sql.query(statement);
    } finally {
      await sql.query("ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update_delete");
    }
  }

  it("chains every insert, concurrent ones too, and verifies", async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        recordAudit({ db, entries: [{ action: "sign_in", actor: { ...actor, label: `u${i}@test.local` } }] }),
      ),
    );
    const result = await verifyAuditTrail({ db });
    expect(result).toEqual({ ok: true, rows: 11, problems: [] });
    const seqs = await sql.query<{ s: string }>("SELECT chain_seq AS s FROM audit_log ORDER BY chain_seq");
    expect(seqs.map((r) => Number(r.s))).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
  });

  it("refuses updates and deletes from everyone but the erasure function", async () => {
    await expect(sql.query("UPDATE audit_log SET actor = 'x' WHERE chain_seq = 1")).rejects.toThrow(
      /append-only/,
    );
    await expect(sql.query("DELETE FROM audit_log WHERE chain_seq = 1")).rejects.toThrow(/append-only/);
    await expect(
      sql.query("UPDATE audit_log SET erased_by = 1, actor = 'x' WHERE chain_seq = 1"),
    ).rejects.toThrow(/append-only/);
  });

  it("erasure rewrites the personal data, records itself, and the trail still verifies", async () => {
    const { erasureId, auditRows } = await erase(db);
    expect(auditRows).toBe(2);
    expect(await verifyAuditTrail({ db })).toMatchObject({ ok: true, problems: [] });
    const leaks = await sql.query("SELECT id FROM audit_log WHERE audit_log::text ~* 'jane'");
    expect(leaks).toEqual([]);
    const [entry] = await sql.query<{ action: string; detail: { erased: Record<string, string> } }>(
      "SELECT action, detail FROM audit_log WHERE id = $1",
      [erasureId],
    );
    expect(entry!.action).toBe("erasure");
    expect(Object.keys(entry!.detail.erased)).toHaveLength(2);
    // Deleting stays refused after an erasure.
    await expect(sql.query("DELETE FROM audit_log WHERE erased_by IS NOT NULL")).rejects.toThrow(
      /append-only/,
    );
  });

  it("detects a row changed, an erased row changed afterwards, and a row deleted", async () => {
    await tamper("UPDATE audit_log SET detail = '{\"note\": \"rewritten\"}' WHERE action = 'fork'");
    await tamper(
      "UPDATE audit_log SET actor = 'someone else' WHERE erased_by IS NOT NULL AND action = 'decision'",
    );
    await tamper("DELETE FROM audit_log WHERE chain_seq = 5");
    const result = await verifyAuditTrail({ db });
    expect(result.ok).toBe(false);
    expect(result.problems.map((p) => p.problem).sort()).toEqual([
      "chain gap before this row",
      "content changed",
      "erased content does not match its erasure",
    ]);
  });
});
