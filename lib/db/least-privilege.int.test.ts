import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { ADMIN_URL } from "@/e2e/support/pg";
import { migrateDatabase } from "./migrate";
import { type Database, openPostgres } from "./open";
import { eraseAuditRows, recordAudit } from "./queries/audit";

/*
 * A managed Postgres gives the application a database it owns and CREATEROLE, not a superuser. Every migration must
 * apply as that user, and afterwards it must not hold the audit trail's eraser role: only the erasure function acts
 * as audit_eraser.
 */

const suffix = `${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
const role = `hitl_app_${suffix}`;
const name = `hitl_leastpriv_${suffix}`;
let database: Database | undefined;

async function asAdmin(text: string) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    return (await admin.query(text)).rows;
  } finally {
    await admin.end();
  }
}

beforeAll(async () => {
  await asAdmin(`CREATE ROLE "${role}" LOGIN CREATEROLE NOSUPERUSER`);
  await asAdmin(`CREATE DATABASE "${name}" OWNER "${role}"`);
});
afterAll(async () => {
  await database?.close();
  await asAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await asAdmin(`DROP ROLE IF EXISTS "${role}"`);
});

it("migrates as a database owner with CREATEROLE, and leaves it unable to act as audit_eraser", async () => {
  const url = new URL(ADMIN_URL);
  url.username = role;
  url.pathname = `/${name}`;
  database = openPostgres(url.toString(), { max: 1 });
  await migrateDatabase(database, join(process.cwd(), "drizzle"));

  const [state] = (
    await database.pool!.query(`SELECT pg_has_role(current_user, 'audit_eraser', 'MEMBER') AS member,
      has_schema_privilege('audit_eraser', 'public', 'CREATE') AS eraser_creates,
      (SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'audit_log_erase_rows') AS owner,
      has_function_privilege(current_user,
        'audit_log_erase_rows(text[], jsonb, text, text, text, jsonb)', 'EXECUTE') AS may_erase,
      (SELECT count(*)::int FROM pg_proc WHERE proname IN ('audit_log_erase', 'audit_log_redact')) AS text_erasers`)
  ).rows;
  expect(state).toEqual({
    member: false,
    eraser_creates: false,
    owner: "audit_eraser",
    may_erase: true,
    text_erasers: 0,
  });

  // The erasure works through its function, and the trail still verifies.
  const actor = { id: "u1", label: "admin@example.com", role: "admin" as const };
  await recordAudit({
    db: database.db,
    entries: [
      {
        action: "ticket_created",
        actor: { id: "u2", label: "operator@example.com", role: "operator" },
        threadId: "t-lars",
        detail: { message: "lars@example.com here" },
      },
    ],
  });
  const [row] = (await database.pool!.query("SELECT id FROM audit_log WHERE thread_id = 't-lars'")).rows;
  const erased = await eraseAuditRows({
    db: database.db,
    threadIds: ["t-lars"],
    rows: [{ id: Number(row.id), detail: { message: "erased@erased.invalid here" } }],
    actor,
    detail: { reason: "test" },
  });
  expect(erased.auditRows).toBe(1);
  expect((await database.pool!.query("SELECT * FROM audit_log_verify()")).rows).toEqual([]);

  // Not by hand: the application's user can neither become audit_eraser nor rewrite the trail.
  await expect(database.pool!.query("SET ROLE audit_eraser")).rejects.toThrow(/permission denied/);
  await expect(database.pool!.query("UPDATE audit_log SET actor = 'x'")).rejects.toThrow(/append-only/);
});
