import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { authedFetch } from "../support/auth";
import { tablesHolding } from "../support/db-print";
import type { TestServer } from "../support/server";
import { runTsx } from "../support/spawn";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer, until } from "./setup";

/*
 * Issue 49, keys, over HTTP on Postgres:
 * - a key service that fails answers 503 `unavailable:key_service` and writes nothing;
 * - the move of a database in clear (threads of the release before, written while one of its instances still
 *   served) to sealed storage, online, while a paused thread is then approved; refused while that instance lives;
 * - erasure afterwards leaves nothing of the customer's readable in any checkpoint;
 * - rotation of the master key: the old one retired, every thread still readable by a server that holds only the new.
 */

const master = () => `m${randomBytes(3).toString("hex")}:${randomBytes(32).toString("base64")}`;
const KEY_A = master();
const KEY_B = master();
const NAME = "Marisol Vantongeren";
const EMAIL = "marisol@example.com";
const WORDS = "the teapot spout snapped off like a twig";

let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
let server: TestServer | undefined;
let failing: Server | undefined;

beforeAll(async () => {
  prepared = await prepareDatabase("keys");
  for (const [id, amount] of [
    // Large enough that a refund always waits for a person.
    ["ORD-8801", 50000],
    ["ORD-8802", 52000],
  ] as const) {
    await prepared.sql.rows(
      `INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
       VALUES ($1, $2, $3, $4, 'EUR', now() - interval '3 days', 'card',
         '[{"sku":"TEA-1","name":"Teapot","quantity":1,"unitCents":4900}]'::jsonb, 'delivered')`,
      [id, NAME, EMAIL, amount],
    );
  }
});
afterAll(async () => {
  failing?.close();
  await cleanUp([server], prepared);
});

const rows = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  prepared.sql.rows<T>(text, params);
const types = async (threadId: string) =>
  (
    await rows<{ type: string }>(
      `SELECT type FROM checkpoint.checkpoint_blobs WHERE thread_id = $1
       UNION ALL SELECT type FROM checkpoint.checkpoint_writes WHERE thread_id = $1`,
      [threadId],
    )
  ).map((r) => r.type);
/** Checkpoint values and writes holding `needle` in clear (as text, or the serializer's JSON escapes). */
const inClear = async (needle: string) =>
  (
    await rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT blob FROM checkpoint.checkpoint_blobs UNION ALL SELECT blob FROM checkpoint.checkpoint_writes) x
       WHERE position(convert_to($1, 'UTF8') IN x.blob) > 0`,
      [needle],
    )
  )[0]?.n ?? 0;

/** The thread's state values (from its checkpoint) as the API answers them, as text. */
async function stateText(threadId: string): Promise<string> {
  const res = await authedFetch(`${server!.url}/api/threads/${threadId}`, {}, "viewer");
  expect(res.status, threadId).toBe(200);
  return JSON.stringify((await res.json()).values ?? null);
}

it("a deployment without its data keys does not start, and says which setting is missing", async () => {
  const refused = (env: Record<string, string>) => startTestServer({ databaseUrl: prepared.url, env });
  await expect(refused({ DATA_MASTER_KEY: "", DATA_INDEX_KEY: "" })).rejects.toThrow(
    /DATA_INDEX_KEY \(or DATA_KEYS_FILE\) is required/,
  );
  await expect(refused({ DATA_MASTER_KEY: "" })).rejects.toThrow(
    /DATA_MASTER_KEY \(or DATA_KEYS_FILE, or KEY_SERVICE_URL\) is required/,
  );
  // A key of the wrong size (30 bytes) is refused too, naming the setting.
  await expect(refused({ DATA_MASTER_KEY: `k1:${"A".repeat(40)}` })).rejects.toThrow(
    /DATA_MASTER_KEY: a master key is id:key/,
  );
  expect(await prepared.sql.count("vault.subject_keys")).toBe(0);
  expect(await prepared.sql.count("instances")).toBe(0);
}, 120_000);

it("a key service that fails answers 503 unavailable:key_service, and nothing is written", async () => {
  failing = createServer((_req, res) => {
    res.statusCode = 500;
    res.end("down");
  });
  await new Promise<void>((resolve) => failing!.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
  const down = await startTestServer({ databaseUrl: prepared.url, env: { KEY_SERVICE_URL: url } });
  try {
    const threads = await prepared.sql.count("threads");
    const audit = await prepared.sql.count("audit_log", "action = 'ticket_created'");
    const res = await authedFetch(
      `${down.url}/api/threads`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: `Refund ORD-8801 please: ${WORDS}`, orderRef: "ORD-8801" }),
      },
      "intake",
    );
    expect(res.status).toBe(503);
    expect((await res.json()).code).toBe("unavailable:key_service");
    expect(await prepared.sql.count("threads")).toBe(threads);
    expect(await prepared.sql.count("audit_log", "action = 'ticket_created'")).toBe(audit);
    expect(await prepared.sql.count("vault.subject_keys")).toBe(0);
  } finally {
    await down.stop();
  }
}, 120_000);

it("moves threads written in clear mid-rollout to sealed storage while serving; erasure then leaves nothing readable; rotation keeps every thread readable", async () => {
  server = await startTestServer({ databaseUrl: prepared.url, env: { DATA_MASTER_KEY: KEY_A } });
  const base = server.url;
  // An instance of the release before is serving (it reads no sealed value): new threads are written in clear.
  await rows(
    `INSERT INTO instances (id, hostname, pid, seen_at) VALUES ('previous-release', 'old-host', 1, now())`,
  );
  const message = `Hi, ${NAME} here (${EMAIL}). Refund ORD-8801 please: ${WORDS}.`;
  const paused = await createTicket(base, message, "ORD-8801");
  const first = await runOnce(agentFor(base, paused), { message });
  expect(first.interrupts[0]?.reason).toBe("refund_approval");
  const plain = await createTicket(base, `${NAME}: ORD-8802 is chipped, ${WORDS}.`, "ORD-8802");
  await runOnce(agentFor(base, plain), { message: `${NAME}: ORD-8802 is chipped, ${WORDS}.` });
  // One of them as the release before filed it: no subject at all.
  await rows("UPDATE threads SET subject_id = NULL WHERE id = $1", [plain]);
  for (const id of [paused, plain])
    expect((await types(id)).some((t) => t.startsWith("sealed:"))).toBe(false);
  expect(await inClear(WORDS)).toBeGreaterThan(0);

  // Sealing waits while the release before serves.
  await expect(
    runTsx("scripts/keys.ts", ["seal"], { DATABASE_URL: prepared.url, DATA_MASTER_KEY: KEY_A }),
  ).rejects.toThrow(/cannot read sealed values/);
  // Its last instance stops: the move runs, while this server serves.
  await rows("UPDATE instances SET stopped_at = now() WHERE id = 'previous-release'");
  const out = await runTsx("scripts/keys.ts", ["seal"], {
    DATABASE_URL: prepared.url,
    DATA_MASTER_KEY: KEY_A,
  });
  expect(out).toMatch(/; 0 threads, orders or accounts left/);
  for (const id of [paused, plain])
    expect(
      (await types(id)).every((t) => t.startsWith("sealed:") || t === "empty"),
      id,
    ).toBe(true);
  expect(await inClear(WORDS)).toBe(0);
  expect(await inClear(NAME)).toBe(0);
  expect(await prepared.sql.count("audit_log", "action = 'data_sealed'")).toBe(1);
  // A second pass finds nothing to do and records nothing.
  expect(
    await runTsx("scripts/keys.ts", ["seal"], { DATABASE_URL: prepared.url, DATA_MASTER_KEY: KEY_A }),
  ).toMatch(/sealed 0 values of 0 threads, orders and accounts/);
  expect(await prepared.sql.count("audit_log", "action = 'data_sealed'")).toBe(1);

  // The paused refund, sealed under it, is approved through the server that served all along: it reads and resumes.
  const resumed = await runOnce(agentFor(base, paused), {
    resume: [answer(first.interrupts[0]!, { decision: "approve" })],
  });
  expect(resumed.events.some((e) => e.type === "RUN_ERROR")).toBe(false);
  expect(await prepared.sql.count("refunds", "order_id = 'ORD-8801'")).toBe(1);
  expect((await types(paused)).filter((t) => !t.startsWith("sealed:") && t !== "empty")).toEqual([]);

  // Rotation: a new master key, the old one retired; re-wrapped online; then a server holding only the new one.
  const rotated = await runTsx("scripts/keys.ts", ["rotate"], {
    DATABASE_URL: prepared.url,
    DATA_MASTER_KEY: KEY_B,
    DATA_MASTER_KEYS_RETIRED: KEY_A,
  });
  expect(rotated).toMatch(/0 left/);
  const byMaster = await rows<{ id: string; n: number }>(
    "SELECT master_key_id AS id, count(*)::int AS n FROM vault.subject_keys GROUP BY 1",
  );
  expect(byMaster.map((r) => r.id)).toEqual([KEY_B.split(":")[0]]);
  await server.stop();
  server = await startTestServer({ databaseUrl: prepared.url, env: { DATA_MASTER_KEY: KEY_B } });
  for (const id of [paused, plain]) {
    expect(await stateText(id), id).toContain(WORDS);
    expect((await (await authedFetch(`${server.url}/api/threads/${id}`, {}, "viewer")).json()).erased).toBe(
      false,
    );
  }

  // Erasure: the keys are destroyed; no checkpoint holds the customer readable, and the threads still answer.
  const keysBefore = await prepared.sql.count("vault.subject_keys");
  const erased = await authedFetch(
    `${server.url}/api/admin/erasure`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: EMAIL }),
    },
    "admin",
  );
  expect(erased.status, await erased.clone().text()).toBe(200);
  const { keysDestroyed } = await erased.json();
  expect(keysDestroyed).toBeGreaterThanOrEqual(1);
  // Theirs only: the demo shop's other customers keep theirs.
  expect(await prepared.sql.count("vault.subject_keys")).toBe(keysBefore - keysDestroyed);
  expect(keysBefore - keysDestroyed).toBeGreaterThan(0);
  for (const id of [paused, plain]) {
    expect(await stateText(id), id).not.toContain(WORDS);
    const view = await (await authedFetch(`${server.url}/api/threads/${id}`, {}, "viewer")).json();
    expect(view.erased, id).toBe(true);
    const page = await authedFetch(`${server.url}/threads/${id}`, {}, "viewer");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("personal data was erased");
  }
  await until("no checkpoint in clear", async () => (await inClear(WORDS)) === 0 || undefined);
  // Nor any other table: what was sealed reads as erased; what the release before wrote in clear that cannot be sealed
  // in place (the append-only audit trail's entries) was rewritten by the erasure.
  for (const needle of [NAME, EMAIL, WORDS]) expect(await tablesHolding(rows, needle), needle).toEqual([]);
}, 300_000);
