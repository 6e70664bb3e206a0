import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApprovalGraph } from "@/e2e/support/approval-graph";
import { tablesHolding } from "@/e2e/support/db-print";
import { createTestDatabase } from "@/e2e/support/pg";
import { DrizzleCheckpointSaver } from "../checkpoint/saver";
import { eraseCustomer } from "../runtime/retention/erasure";
import { getOrder, insertOrdersIfMissing } from "../shop/orders";
import { migrateDatabase } from "./migrate";
import { type Database, openPglite, openPostgres } from "./open";
import { listAudit, recordAudit } from "./queries/audit";
import { queueEmail } from "./queries/outbox";
import { searchThreads } from "./queries/search";
import { createThread, getThread } from "./queries/threads";
import { customerSubjectId, ERASED_TEXT, forgetKeys } from "./vault";

/*
 * Issue 49, acceptance: a backup taken before an erasure, restored after it beside the key store as it is now, yields
 * nothing of the erased customer and everything of the others. Nothing of anyone is in the backup in clear (every
 * personal value is sealed under its subject's key); the erased customer's key is gone from the key store, so what
 * the backup holds of them never opens again, and search finds nothing of them through the index rows it still holds.
 * Postgres: pg_dump / pg_restore. The embedded database: a copy of its data folder.
 */

const CUSTOMERS = {
  ann: {
    name: "Annabel Quillfeather",
    email: "annabel.q@example.com",
    order: "ORD-DUMP-ANN",
    words: "my zephyrometer arrived cracked",
  },
  dora: {
    name: "Dorothea Wrenfield",
    email: "dorothea.w@example.com",
    order: "ORD-DUMP-DORA",
    words: "the kaleidoscope lamp hums loudly",
  },
} as const;
type Who = keyof typeof CUSTOMERS;
const ACTOR = { id: "user:op", label: "op@example.com", role: "operator" as const };

/** Each customer's order, ticket (paused at its approval), email and audit entry; their threads by customer. */
async function seed(database: Database): Promise<Record<Who, string>> {
  const { db } = database;
  await insertOrdersIfMissing({
    db,
    rows: Object.values(CUSTOMERS).map((c) => ({
      id: c.order,
      customerName: c.name,
      customerEmail: c.email,
      amountCents: 9900,
      placedAt: new Date(),
      paymentMethod: "card",
      items: [{ sku: "Z", name: "Zephyrometer", quantity: 1, unitCents: 9900 }],
      status: "delivered",
    })),
  });
  const threads = {} as Record<Who, string>;
  for (const who of Object.keys(CUSTOMERS) as Who[]) {
    const c = CUSTOMERS[who];
    const thread = await createThread({
      db,
      title: `Refund for ${c.name}`,
      customerMessage: `Hello, ${c.name} here (${c.email}): ${c.words}.`,
      orderRef: c.order,
      ticket: { note: c.words },
      subjectId: customerSubjectId(c.email),
    });
    threads[who] = thread.id;
    const graph = buildApprovalGraph(new DrizzleCheckpointSaver(database.sql));
    await graph.invoke({ order: c.order, note: c.words }, { configurable: { thread_id: thread.id } });
    await queueEmail({
      db,
      decisionRef: `dump-${who}`,
      threadId: thread.id,
      to: c.email,
      subject: `About ${c.order}`,
      body: `Dear ${c.name}, about "${c.words}"`,
    });
    await recordAudit({
      db,
      entries: [
        { action: "decision", actor: ACTOR, threadId: thread.id, answer: { note: `${c.name}: ${c.words}` } },
      ],
    });
  }
  return threads;
}

/** Put the key store of `from` (as it is now) beside the data of `into`. */
async function copyKeyStore(from: Database, into: Database) {
  const keys = await from.sql.query<{ subject_id: string; master_key_id: string; wrapped: Uint8Array }>(
    "SELECT subject_id, master_key_id, wrapped FROM vault.subject_keys",
  );
  const erased = await from.sql.query<{ subject_id: string; erasure_id: string }>(
    "SELECT subject_id, erasure_id FROM vault.erased_subjects",
  );
  await into.sql.query("DELETE FROM vault.subject_keys");
  await into.sql.query("DELETE FROM vault.erased_subjects");
  for (const k of keys) {
    await into.sql.query(
      "INSERT INTO vault.subject_keys (subject_id, master_key_id, wrapped) VALUES ($1, $2, $3)",
      [k.subject_id, k.master_key_id, Buffer.from(k.wrapped)],
    );
  }
  for (const e of erased) {
    await into.sql.query("INSERT INTO vault.erased_subjects (subject_id, erasure_id) VALUES ($1, $2)", [
      e.subject_id,
      e.erasure_id,
    ]);
  }
  return { keys: keys.length, erased: erased.length };
}

/** What the restored database yields of each customer, read as the console reads it. */
async function yields(database: Database, threads: Record<Who, string>) {
  forgetKeys();
  const { db } = database;
  const out = {} as Record<Who, unknown>;
  for (const who of Object.keys(CUSTOMERS) as Who[]) {
    const c = CUSTOMERS[who];
    const graph = buildApprovalGraph(new DrizzleCheckpointSaver(database.sql));
    const state = await graph.getState({ configurable: { thread_id: threads[who] } });
    const audit = await listAudit({ db, filter: { threadId: threads[who], limit: 10 } });
    const order = await getOrder({ db, orderId: c.order });
    const thread = await getThread({ db, threadId: threads[who] });
    const found = async (q: string) =>
      (await searchThreads({ db, q })).some((hit) => hit.threadId === threads[who]);
    out[who] = {
      title: thread?.title,
      ticket: thread?.ticket,
      order: [order?.customerName, order?.customerEmail],
      state: state.values.note ?? null,
      audit: audit.items.map((a) => a.answer),
      foundByWords: await found(c.words.split(" ")[1] ?? ""),
      foundByEmail: await found(c.email),
      foundByName: await found(c.name),
    };
  }
  return out;
}

const whole = (who: Who) => {
  const c = CUSTOMERS[who];
  return {
    title: `Refund for ${c.name}`,
    ticket: { note: c.words },
    order: [c.name, c.email],
    state: c.words,
    audit: [{ note: `${c.name}: ${c.words}` }],
    foundByWords: true,
    foundByEmail: true,
    foundByName: true,
  };
};
const ERASED = {
  title: ERASED_TEXT,
  ticket: { erased: true },
  order: [ERASED_TEXT, ERASED_TEXT],
  state: "",
  audit: [{ erased: true }],
  foundByWords: false,
  foundByEmail: false,
  foundByName: false,
};

async function inClear(database: Database): Promise<Record<string, string[]>> {
  const rows = <T>(text: string, params: unknown[] = []) => database.sql.query<T>(text, params as unknown[]);
  const found: Record<string, string[]> = {};
  for (const c of Object.values(CUSTOMERS)) {
    for (const needle of [c.name, c.email, c.words]) {
      const tables = await tablesHolding(rows, needle);
      if (tables.length > 0) found[needle] = tables;
    }
  }
  return found;
}

describe("a backup taken before an erasure, restored after it beside today's key store", () => {
  const scratch = mkdtempSync(join(tmpdir(), "hitl-dump-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("postgres (pg_dump, pg_restore): nothing of the erased customer, everything of the other", async () => {
    const live = await createTestDatabase("dump");
    const restored = await createTestDatabase("restored");
    const database = openPostgres(live.url, { max: 4 });
    let copy: Database | undefined;
    try {
      await migrateDatabase(database, join(process.cwd(), "drizzle"));
      const threads = await seed(database);
      expect(await yields(database, threads)).toEqual({ ann: whole("ann"), dora: whole("dora") });
      const file = join(scratch, "before.dump");
      execFileSync("pg_dump", ["--format=custom", "--file", file, live.url]);

      const report = await eraseCustomer({
        db: database.db,
        email: CUSTOMERS.ann.email,
        actor: { id: "user:dpo", label: "DPO", role: "admin" },
        archiveDir: scratch,
        mailDir: scratch,
      });
      expect(report.keysDestroyed).toBeGreaterThan(0);

      execFileSync("pg_restore", [
        "--no-owner",
        "--no-acl",
        "--exit-on-error",
        "--dbname",
        restored.url,
        file,
      ]);
      copy = openPostgres(restored.url, { max: 4 });
      expect(await inClear(copy), "the backup holds nobody's data in clear").toEqual({});
      expect(await copyKeyStore(database, copy)).toMatchObject({ erased: 1 });
      expect(await yields(copy, threads)).toEqual({ ann: ERASED, dora: whole("dora") });
    } finally {
      await copy?.close();
      await database.close();
      await restored.drop();
      await live.drop();
    }
  }, 180_000);

  it("the embedded database (a copy of its data folder): nothing of the erased customer, everything of the other", async () => {
    const liveDir = join(scratch, "live");
    const backupDir = join(scratch, "backup");
    let database = await openPglite(liveDir);
    let copy: Database | undefined;
    try {
      await migrateDatabase(database, join(process.cwd(), "drizzle"));
      const threads = await seed(database);
      await database.close();
      cpSync(liveDir, backupDir, { recursive: true });
      database = await openPglite(liveDir);

      await eraseCustomer({
        db: database.db,
        email: CUSTOMERS.ann.email,
        actor: { id: "user:dpo", label: "DPO", role: "admin" },
        archiveDir: scratch,
        mailDir: scratch,
      });

      copy = await openPglite(backupDir);
      expect(await inClear(copy), "the backup holds nobody's data in clear").toEqual({});
      expect(await yields(copy, threads)).toEqual({ ann: whole("ann"), dora: whole("dora") });
      expect(await copyKeyStore(database, copy)).toMatchObject({ erased: 1 });
      expect(await yields(copy, threads)).toEqual({ ann: ERASED, dora: whole("dora") });
    } finally {
      await copy?.close();
      await database.close();
    }
  }, 180_000);
});
