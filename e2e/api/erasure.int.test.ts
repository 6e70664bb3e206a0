import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authedFetch, signIn, TEST_PASSWORD } from "../support/auth";
import { tablesHolding, threadPrint } from "../support/db-print";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { until, useTestServer } from "./setup";

/*
 * Erasure by subject, not by string. Before, `POST /api/admin/erasure` replaced whatever it was given as free text in
 * every table: erasing a staff email removed the approver from the ledger, `name: "approve"` rewrote every approve
 * answer, and the account-change agent's IBAN stayed. Now it erases one customer that exists — their name and email
 * everywhere, the values their agents declare personal in their threads — and nothing of the ledger.
 */
describe("erasure of one customer", () => {
  const ctx = useTestServer("erasure");
  const rows = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    ctx.prepared.sql.rows<T>(text, params);
  const erase = (body: unknown) =>
    authedFetch(
      ctx.url("/api/admin/erasure"),
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      "admin",
    );

  const scan = (needle: string) => tablesHolding(rows, needle);

  /** What must read the same before and after: the ledger, the money, and who did what. */
  async function ledger() {
    return JSON.stringify({
      decisions: await rows(
        "SELECT interrupt_id, thread_id, action, status, answer, resolved_by FROM decisions ORDER BY interrupt_id",
      ),
      refunds: await rows(
        "SELECT order_id, sum(amount_cents)::int AS cents, array_agg(approved_by ORDER BY id) AS by FROM refunds GROUP BY order_id ORDER BY order_id",
      ),
      runs: await rows(
        "SELECT id, thread_id, kind, status, started_by, started_by_label FROM runs ORDER BY id",
      ),
      // The erasure's own entry is the one row it adds.
      audit: await rows(
        "SELECT id, action, actor_id, actor_role, thread_id, interrupt_id FROM audit_log WHERE action <> 'erasure' ORDER BY id",
      ),
      threads: await rows("SELECT id, status, agent_id, order_ref FROM threads ORDER BY id"),
    });
  }

  async function refunded(order: string, message: string, orderRef?: string) {
    const base = ctx.server!.url;
    const threadId = await createTicket(base, message, orderRef);
    const agent = agentFor(base, threadId);
    let run = await runOnce(agent, { message });
    // Approve, pick the first option, send: whatever the agent asks, until it is done.
    for (let step = 0; run.interrupts.length > 0 && step < 5; step++) {
      const asked = run.interrupts[0]!;
      const payload = (asked.metadata?.payload ?? {}) as { options?: { id: string }[] };
      const reply =
        asked.reason === "refund_approval"
          ? { decision: "approve" }
          : asked.reason === "confirm_email"
            ? { choice: "send" }
            : { optionId: payload.options?.[0]?.id ?? "" };
      run = await runOnce(agent, { resume: [answer(asked, reply)] });
    }
    expect(await ctx.prepared.sql.count("refunds", "order_id = $1", [order])).toBe(1);
    // The payment and the email are delivered in the background (and audited): wait, so the ledger holds still.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { effects } = (await (await authedFetch(ctx.url(`/api/threads/${threadId}/effects`))).json()) as {
        effects: { status: string }[];
      };
      if (effects.length > 0 && effects.every((e) => e.status === "delivered")) break;
      if (Date.now() > deadline)
        throw new Error(`effects of ${order} not delivered: ${JSON.stringify(effects)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return threadId;
  }

  const LARS = { name: "Lars Jensen", email: "lars.jensen@example.com" };
  const IBAN = "DE89370400440532013000";
  const LARS_WORDS = "My headphones from ORD-1002 stopped working after a week, please refund them.";

  it("erases the customer's name, email, words and IBAN everywhere; the ledger, the money, staff and others stay", async () => {
    const base = ctx.server!.url;
    const larsRefund = await refunded("ORD-1002", LARS_WORDS);
    const other = await refunded("ORD-1006", "The desk lamp from ORD-1006 flickers, please refund it.");
    // An account change of Lars's payout account, waiting for its two reviews.
    const change = `Please change my payout account to ${IBAN}`;
    const changeThread = await createTicket(base, change, "ORD-1002", "account_change");
    const reviews = await runOnce(agentFor(base, changeThread), { message: change });
    expect(reviews.interrupts).toHaveLength(2);

    // At rest, no table holds any of it in clear (sealed under his keys); through the API, all of it reads.
    const readable = async () => {
      const texts: string[] = [];
      for (const id of [larsRefund, changeThread]) {
        for (const path of [
          `/api/threads/${id}`,
          `/api/threads/${id}/history`,
          `/api/threads/${id}/decisions`,
        ]) {
          texts.push(await (await authedFetch(ctx.url(path), {}, "viewer")).text());
        }
      }
      return texts.join("\n");
    };
    // The simulated mail wrote his emails as files (the server's MAIL_DIR, `.data/mail` of the checkout).
    const mailFiles = (
      await rows<{ id: string }>("SELECT id FROM effects WHERE thread_id = $1 AND kind = 'email'", [
        larsRefund,
      ])
    ).map((r) => join(process.cwd(), ".data", "mail", `${r.id}.eml`));
    expect(mailFiles.length).toBeGreaterThan(0);
    for (const file of mailFiles) expect(readFileSync(file, "utf8")).toContain(LARS.email);
    const shown = await readable();
    for (const needle of [LARS.name, LARS.email, IBAN, LARS_WORDS]) {
      expect(await scan(needle), needle).toEqual([]);
      expect(shown, needle).toContain(needle);
    }
    const before = await ledger();
    const otherBefore = await threadPrint(rows, other);
    const auditRows = await ctx.prepared.sql.count("audit_log");

    // Refused, writing nothing: a staff account that is no customer, a word of the product, someone who is no customer.
    const staff = await erase({ email: "admin@test.local" });
    expect(staff.status).toBe(404);
    expect((await staff.json()).code).toBe("not_found:customer");
    for (const name of ["approve", "pending", "Mr Approve"]) {
      const word = await erase({ email: LARS.email, name });
      expect(word.status, name).toBe(422);
      expect((await word.json()).code).toBe("unprocessable:erasure_name");
    }
    const nobody = await erase({ email: "nobody@example.com" });
    expect(nobody.status).toBe(404);
    expect(await ctx.prepared.sql.count("audit_log")).toBe(auditRows);

    // A preview says what would change, and changes nothing.
    const preview = await erase({ email: LARS.email, preview: true });
    expect(preview.status).toBe(200);
    const previewed = await preview.json();
    expect(previewed.preview).toBe(true);
    expect(previewed.threads).toBe(2);
    // Everything of Lars's is sealed under keys: erasure destroys two (his and his threads'), forgets his index rows
    // (his tickets' words, his order's name and subject) and rewrites no other row, not one of the audit trail.
    expect(previewed).toMatchObject({
      keysDestroyed: 2,
      rows: { "thread_search.terms": 2, "order_names.terms": 1, "orders.subject_id": 1 },
      auditRows: 0,
    });
    expect(await ctx.prepared.sql.count("audit_log")).toBe(auditRows);
    expect(await readable()).toContain(IBAN);

    const res = await erase({ email: LARS.email, name: "L. Jensen" });
    expect(res.status).toBe(200);
    const report = await res.json();
    expect(report.threads).toBe(2);

    expect(report.mailFiles).toBe(mailFiles.length);
    for (const file of mailFiles) expect(existsSync(file), file).toBe(false);
    const after = await readable();
    for (const needle of [LARS.name, LARS.email, IBAN, LARS_WORDS]) {
      expect(await scan(needle), needle).toEqual([]);
      expect(after, needle).not.toContain(needle);
    }
    expect(await ledger()).toBe(before);
    expect(await ctx.prepared.sql.count("audit_log", "action = 'erasure'")).toBe(1);
    expect(await threadPrint(rows, other)).toBe(otherBefore);
    expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);
    // Their threads still render.
    expect((await authedFetch(ctx.url(`/threads/${changeThread}`), {}, "viewer")).status).toBe(200);
  }, 180_000);

  /*
   * Issue 49, first step: erasure rewrote a regular expression across every column of every table — erasing "Ann"
   * turned every checkpoint's `channel_versions` into `ch[erased customer]el_versions`, Joanna's address
   * `joanna@example.com` into `jo[erased customer]a@…` and the staff label `shannon@…` into `sh[erased customer]on@…`,
   * and a customer sharing an address with a staff member could not be erased at all. Now it rewrites the subject's
   * own rows only: everyone else's rows are byte-identical afterwards, and their threads keep working.
   */
  const CUSTOMERS = {
    ann: { name: "Ann", email: "ann@example.com", orders: ["ORD-7001", "ORD-7002"] },
    joanna: { name: "Joanna Annis", email: "joanna@example.com", orders: ["ORD-7003", "ORD-7004"] },
    dora: { name: "Dora", email: "dora@example.com", orders: ["ORD-7005", "ORD-7006"] },
  } as const;
  type Customer = keyof typeof CUSTOMERS;
  /** Tables whose rows move by themselves (heartbeats, the chainer, sessions): not compared. */
  const VOLATILE = new Set([
    "public.instances",
    "public.scheduled_jobs",
    "public.audit_chain",
    "public.audit_chain_state",
    "public.queue_samples",
    "public.auth_sessions",
    "public.auth_rate_limits",
    "public.auth_verifications",
    "public.thread_followers",
    "public.inbox_changes",
  ]);

  /**
   * Every row of every table as text, by table, leaving out the subject's own rows (rows of their threads, their
   * orders) and audit entries added since `auditAfter` — every audit row before it, the subject's included (what
   * they say of the subject is sealed under the subject's key: erasure rewrites none). Equal before and after means
   * nobody else's row changed and the trail was not rewritten.
   */
  async function othersDump(subject: { threads: string[]; orders: readonly string[] }, auditAfter: number) {
    const tables = await rows<{ name: string; thread: string | null }>(
      `SELECT t.table_schema || '.' || t.table_name AS name,
         (SELECT c.column_name::text FROM information_schema.columns c WHERE c.table_schema = t.table_schema
           AND c.table_name = t.table_name AND c.column_name IN ('thread_id') LIMIT 1) AS thread
       FROM information_schema.tables t
       WHERE t.table_type = 'BASE TABLE' AND t.table_schema IN ('public', 'checkpoint') ORDER BY 1`,
    );
    const dump: Record<string, string[]> = {};
    for (const { name, thread } of tables) {
      if (VOLATILE.has(name) || name.includes("__drizzle")) continue;
      const [schema, table] = name.split(".") as [string, string];
      const where =
        table === "threads"
          ? "NOT (x.id = ANY($1))"
          : table === "orders"
            ? "NOT (x.id = ANY($2))"
            : table === "audit_log"
              ? "x.id <= $3"
              : thread
                ? "NOT (x.thread_id = ANY($1))"
                : "true";
      const found = await rows<{ r: string }>(
        `SELECT x::text AS r FROM "${schema}"."${table}" x WHERE ${where} AND $1::text[] IS NOT NULL
           AND $2::text[] IS NOT NULL AND $3::bigint IS NOT NULL ORDER BY 1`,
        [subject.threads, subject.orders, auditAfter],
      );
      dump[name] = found.map((f) => f.r);
    }
    return dump;
  }

  const threadsOf = async (who: Customer) =>
    (
      await rows<{ id: string }>("SELECT id FROM threads WHERE customer_order = ANY($1) ORDER BY id", [
        CUSTOMERS[who].orders,
      ])
    ).map((r) => r.id);
  const lastAudit = async () =>
    Number((await rows<{ n: string | null }>("SELECT max(id) AS n FROM audit_log"))[0]?.n ?? 0);
  const view = async (threadId: string) => {
    const res = await authedFetch(ctx.url(`/api/threads/${threadId}`), {}, "viewer");
    expect(res.status, threadId).toBe(200);
    return res.json();
  };
  const search = async (q: string) =>
    (
      (await (await authedFetch(ctx.url(`/api/search?q=${encodeURIComponent(q)}`), {}, "viewer")).json()) as {
        hits: { threadId: string }[];
      }
    ).hits.map((h) => h.threadId);

  /** Erase `who` over HTTP: every other subject's rows and every audit row stay byte-identical, none rewritten. */
  async function eraseTouchingNobodyElse(who: Customer) {
    const subject = { threads: await threadsOf(who), orders: CUSTOMERS[who].orders };
    const auditBefore = await lastAudit();
    const before = await othersDump(subject, auditBefore);
    const res = await erase({ email: CUSTOMERS[who].email });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await res.json()).auditRows).toBe(0);
    const after = await othersDump(subject, auditBefore);
    for (const table of Object.keys(before)) expect(after[table], `${who}: ${table}`).toEqual(before[table]);
  }

  async function pausedRefund(order: string, message: string) {
    const base = ctx.server!.url;
    const threadId = await createTicket(base, message, order);
    const run = await runOnce(agentFor(base, threadId), { message });
    expect(run.interrupts.map((i) => i.reason)).toEqual(["refund_approval"]);
    return { threadId, interrupt: run.interrupts[0]! };
  }

  it("erases one customer's own rows only: other customers', staff members' and every checkpoint's structure stay byte-identical, and their threads keep working", async () => {
    const base = ctx.server!.url;
    for (const [i, [, c]] of Object.entries(CUSTOMERS).entries()) {
      for (const [j, order] of c.orders.entries()) {
        await rows(
          `INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
           VALUES ($1, $2, $3, $4, 'EUR', now() - interval '3 days', 'card',
             '[{"sku":"LMP-1","name":"Lamp","quantity":1,"unitCents":15000}]'::jsonb, 'delivered')`,
          [order, c.name, c.email, 15000 + 100 * (2 * i + j)],
        );
      }
    }
    // Staff: Shannon (her address holds "ann"), and a staff member whose address is Dora's.
    for (const [email, role] of [
      ["shannon@example.com", "supervisor"],
      [CUSTOMERS.dora.email, "viewer"],
    ] as const) {
      const res = await authedFetch(
        ctx.url("/api/admin/users"),
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, name: `Staff ${email}`, password: TEST_PASSWORD, role }),
        },
        "admin",
      );
      expect(res.status, email).toBe(201);
    }
    const shannon = await signIn(base, "shannon@example.com");
    await signIn(base, CUSTOMERS.dora.email);

    // For each customer a finished refund and one paused at its approval; Dora's words name Ann.
    await refunded(
      "ORD-7001",
      "Hi, I'm Ann (ann@example.com). My lamp ORD-7001 arrived broken, please refund it.",
      "ORD-7001",
    );
    const annPaused = await pausedRefund("ORD-7002", "Ann again: ORD-7002 flickers. Refund please. Ann");
    await refunded(
      "ORD-7003",
      "Joanna Annis here, joanna@example.com — ORD-7003 is scratched, please refund.",
      "ORD-7003",
    );
    const joannaPaused = await pausedRefund("ORD-7004", "Joanna Annis: ORD-7004 never worked. Refund it.");
    await refunded("ORD-7005", "Dora (dora@example.com): ORD-7005 is dented, please refund.", "ORD-7005");
    const doraPaused = await pausedRefund(
      "ORD-7006",
      "My neighbour Ann told me to write: ORD-7006 is broken, please refund. Dora",
    );
    // Shannon claims Dora's pending decision: her label is on a claim and in the audit trail.
    const claim = await fetch(ctx.url("/api/inbox/claims"), {
      method: "POST",
      headers: { "content-type": "application/json", cookie: shannon, origin: new URL(base).origin },
      body: JSON.stringify({ interruptId: doraPaused.interrupt.id }),
    });
    expect([200, 201], await claim.clone().text()).toContain(claim.status);

    const ann = { threads: await threadsOf("ann"), orders: CUSTOMERS.ann.orders };
    expect(ann.threads).toHaveLength(2);
    const others = [...(await threadsOf("joanna")), ...(await threadsOf("dora"))];
    const viewsBefore = await Promise.all(others.map(view));
    const auditBefore = await lastAudit();
    const dumpBefore = await othersDump(ann, auditBefore);
    expect(dumpBefore["checkpoint.checkpoints"]!.some((r) => r.includes("channel_versions"))).toBe(true);
    expect(dumpBefore["public.audit_log"]!.some((r) => r.includes("shannon@example.com"))).toBe(true);
    const joannaHits = (await search("Joanna Annis")).sort();
    expect(joannaHits).toEqual((await threadsOf("joanna")).sort());

    const res = await erase({ email: "ANN@example.com " });
    expect(res.status, await res.clone().text()).toBe(200);
    const report = await res.json();
    expect(report.threads).toBe(2);
    // What the trail says of Ann's threads is sealed under her keys: no audit row is rewritten.
    expect(report.auditRows).toBe(0);

    // Nobody else's row changed, in any table; the trail verifies; no audit row was rewritten.
    const dumpAfter = await othersDump(ann, auditBefore);
    for (const table of Object.keys(dumpBefore)) expect(dumpAfter[table], table).toEqual(dumpBefore[table]);
    expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);
    const rewritten = await rows<{ thread_id: string | null }>(
      "SELECT DISTINCT thread_id FROM audit_log WHERE erased_by = $1 ORDER BY 1",
      [report.erasureId],
    );
    expect(rewritten).toEqual([]);
    // Ann's event log and emails are sealed under her destroyed key (base64 ciphertext is left out of the word scan
    // below: it may spell "ann" by chance).
    expect(
      await rows(
        `SELECT 1 FROM events WHERE thread_id = ANY($1) AND event ->> '$sealed' IS NULL
         UNION ALL SELECT 1 FROM outbox WHERE thread_id = ANY($1) AND to_address NOT LIKE 'sealed:v1:%'`,
        [ann.threads],
      ),
    ).toEqual([]);
    // Ann's other rows hold neither her name nor her address; her checkpoints keep their keys.
    const annRows = await rows<{ t: string }>(
      `SELECT concat_ws('|', (SELECT string_agg(x::text, '') FROM threads x WHERE id = ANY($1)),
         (SELECT string_agg(x::text, '') FROM decisions x WHERE thread_id = ANY($1)),
         (SELECT string_agg(x::text, '') FROM orders x WHERE id = ANY($2)),
         (SELECT string_agg(convert_from(blob, 'UTF8'), '') FROM checkpoint.checkpoint_blobs WHERE thread_id = ANY($1) AND type = 'json'),
         (SELECT string_agg(convert_from(blob, 'UTF8'), '') FROM checkpoint.checkpoint_writes WHERE thread_id = ANY($1) AND type = 'json'),
         (SELECT string_agg(concat(payload, answer, detail), '') FROM audit_log WHERE thread_id = ANY($1))) AS t`,
      [ann.threads, ann.orders],
    );
    expect(annRows[0]!.t).not.toMatch(/(?<![a-z])ann(?![a-z])/i);
    expect(annRows[0]!.t).toContain("[erased customer]");
    expect(
      await rows(
        "SELECT 1 FROM checkpoint.checkpoints WHERE thread_id = ANY($1) AND NOT checkpoint ? 'channel_versions'",
        [ann.threads],
      ),
    ).toEqual([]);
    // Everyone else's threads read the same through the API, and search still finds Joanna.
    expect(await Promise.all(others.map(view))).toEqual(viewsBefore);
    expect((await search("joanna@example.com")).sort()).toEqual(joannaHits);
    expect((await search("Joanna Annis")).sort()).toEqual(joannaHits);
    // Ann's paused thread still renders, and can still be decided.
    expect((await authedFetch(ctx.url(`/threads/${annPaused.threadId}`), {}, "viewer")).status).toBe(200);

    // A decision on Joanna's pending refund afterwards pays and mails her.
    const decided = await runOnce(agentFor(base, joannaPaused.threadId), {
      resume: [answer(joannaPaused.interrupt, { decision: "approve" })],
    });
    for (let step = 0; decided.interrupts.length > 0 && step < 3; step++) {
      const asked = decided.interrupts[0]!;
      const next = await runOnce(agentFor(base, joannaPaused.threadId), {
        resume: [
          answer(asked, asked.reason === "confirm_email" ? { choice: "send" } : { decision: "approve" }),
        ],
      });
      decided.interrupts = next.interrupts;
    }
    await until("Joanna's refund and email delivered", async () => {
      const effects = await rows<{ kind: string; status: string }>(
        "SELECT kind, status FROM effects WHERE thread_id = $1 ORDER BY kind",
        [joannaPaused.threadId],
      );
      return effects.length >= 2 && effects.every((e) => e.status === "delivered") ? effects : undefined;
    });
    // Her email went to her address (sealed in the outbox: read through the thread's effects).
    const { effects: joannaEffects } = (await (
      await authedFetch(ctx.url(`/api/threads/${joannaPaused.threadId}/effects`))
    ).json()) as { effects: { kind: string; summary: string }[] };
    expect(joannaEffects.find((e) => e.kind === "email")?.summary).toContain(CUSTOMERS.joanna.email);

    // Dora shares her address with a staff member: she is erased, the staff account and its labels are not.
    const staffLabels = async () =>
      rows("SELECT id, actor FROM audit_log WHERE actor IN ($1, $2) ORDER BY id", [
        CUSTOMERS.dora.email,
        "shannon@example.com",
      ]);
    const labelsBefore = await staffLabels();
    expect(labelsBefore.length).toBeGreaterThanOrEqual(2);
    // Every other subject's rows (Ann's erased ones and Joanna's included) and every audit row stay byte-identical.
    await eraseTouchingNobodyElse("dora");
    expect(await staffLabels()).toEqual(labelsBefore);
    expect(await rows("SELECT email FROM auth_users WHERE email = $1", [CUSTOMERS.dora.email])).toHaveLength(
      1,
    );
    await signIn(base, CUSTOMERS.dora.email);
    // Dora's own words named Ann: they are Dora's, erased with Dora's thread only as far as Dora goes.
    expect(await view(doraPaused.threadId)).toBeTruthy();
    expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);
    // A paused thread of an erased customer can still be closed.
    const closed = await authedFetch(
      ctx.url(`/api/threads/${annPaused.threadId}/close`),
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ note: "Customer erased" }),
      },
      "supervisor",
    );
    expect(closed.status, await closed.clone().text()).toBe(200);
    expect((await view(annPaused.threadId)).status).toBe("closed");

    // Joanna last: again nobody else's row, and no audit row, changes.
    await eraseTouchingNobodyElse("joanna");
    expect(await search("Joanna Annis")).toEqual([]);
    expect(await search(CUSTOMERS.joanna.email)).toEqual([]);
    expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);

    // A second erasure of Ann is a no-op that says so; an unknown customer is refused; neither writes.
    const auditRows = await lastAudit();
    const again = await erase({ email: CUSTOMERS.ann.email });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({
      alreadyErased: true,
      erasureId: report.erasureId,
      auditRows: 0,
    });
    const unknown = await erase({ email: "nobody-at-all@example.com" });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).code).toBe("not_found:customer");
    expect(await lastAudit()).toBe(auditRows);
  }, 300_000);
});
