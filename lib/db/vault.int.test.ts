import { createHash, randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { buildApprovalGraph } from "@/e2e/support/approval-graph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { startTestSmtpServer } from "@/e2e/support/smtp";
import { DrizzleCheckpointSaver } from "../checkpoint/saver";
import { emailConnector } from "../delivery/connectors/email";
import { dispatchDueEffects } from "../delivery/dispatcher";
import { eraseCustomer } from "../runtime/retention/erasure";
import { sealExistingThreads } from "../runtime/retention/seal-existing";
import {
  accountIdOf,
  applyAccountChange,
  getCustomerAccount,
  listAccountChangesForThread,
  recordAccountChange,
} from "../shop/accounts";
import { getOrder, insertOrdersIfMissing } from "../shop/orders";
import { listOrders } from "../shop/orders-list";
import { listAudit, recordAudit, verifyAuditTrail } from "./queries/audit";
import { markExpiryFailed } from "./queries/deadlines";
import { listThreadDecisions, recordPendingDecisions, resolveDecision } from "./queries/decisions";
import { getEffect, markEffectAttemptFailed } from "./queries/effects";
import { appendEvents, compactThreadEvents, readEvents, readRunEvents } from "./queries/events";
import { listInbox } from "./queries/inbox";
import {
  claimDueNotifications,
  deleteTarget,
  enqueueNotifications,
  insertTarget,
} from "./queries/notifications";
import { listEmailsForThread, queueEmail } from "./queries/outbox";
import { enqueueInput, getQueuedInput, listWaitingInputs } from "./queries/queued-inputs";
import { closeRun } from "./queries/run-end";
import { getLastFailedRun, getRun, insertRun, lastFork, setRunInput } from "./queries/runs";
import { searchThreads } from "./queries/search";
import { createThread, getThread, getThreads, listRecentThreads } from "./queries/threads";
import { customerSubjectId, destroySubjectKeys, ERASED_TEXT, forgetKeys, SEALED_TEXT } from "./vault";

/*
 * Issue 49, keys: a thread filed for a customer is sealed under that customer's key from its first checkpoint. The
 * saver's tables hold ciphertext (no value of the agent's state in clear, under any encoding the serializer uses);
 * the state reads back whole; once the key is destroyed, the thread's values read as absent (never an error) and
 * nothing more is written to it; another customer's thread is untouched.
 */

const NAME = "Ingrid Quaxwell-Sealed";
const ORDER = "ORD-SEALED-9931";

describe.each<Backend>(["pglite", "postgres"])("personal data under keys (%s)", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    backend = await openBackend(kind);
  });
  afterAll(async () => {
    await backend?.close();
  });

  async function pausedThread(email: string | null) {
    const { database } = backend;
    const thread = await createThread({
      db: database.db,
      title: "Sealed",
      customerMessage: `From ${NAME}`,
      orderRef: null,
      subjectEmail: email,
    });
    const graph = buildApprovalGraph(new DrizzleCheckpointSaver(database.sql));
    const config = { configurable: { thread_id: thread.id } };
    await graph.invoke({ order: ORDER, note: NAME }, config);
    return { threadId: thread.id, graph, config };
  }

  /** A thread filed for the customer with `email` (null: a subject of its own). */
  function filed(title: string, email: string | null) {
    return createThread({
      db: backend.database.db,
      title,
      customerMessage: "x",
      orderRef: null,
      subjectEmail: email,
    });
  }

  async function stored(threadId: string) {
    return backend.database.sql.query<{ type: string; bytes: Uint8Array }>(
      `SELECT type, blob AS bytes FROM checkpoint.checkpoint_blobs WHERE thread_id = $1
       UNION ALL SELECT type, blob FROM checkpoint.checkpoint_writes WHERE thread_id = $1`,
      [threadId],
    );
  }

  it("seals every value and write of a customer's thread, and reads it back whole", async () => {
    const { threadId, graph, config } = await pausedThread("ingrid@example.com");
    const rows = await stored(threadId);
    expect(rows.length).toBeGreaterThan(3);
    for (const row of rows) {
      expect(row.type.startsWith("sealed:"), row.type).toBe(true);
      const bytes = Buffer.from(row.bytes);
      for (const encoding of ["utf8", "latin1", "utf16le", "base64", "hex"] as const) {
        expect(bytes.toString(encoding)).not.toContain(NAME);
        expect(bytes.toString(encoding)).not.toContain(ORDER);
      }
    }
    const [thread] = await backend.database.sql.query<{ subject_id: string }>(
      "SELECT subject_id FROM threads WHERE id = $1",
      [threadId],
    );
    expect(thread?.subject_id).toBe(customerSubjectId("Ingrid@Example.com "));
    // The checkpoints' metadata is the engine's bookkeeping (kept in clear, filtered on): none of the state's values.
    const metadata = await backend.database.sql.query<{ text: string }>(
      "SELECT metadata::text AS text FROM checkpoint.checkpoints WHERE thread_id = $1",
      [threadId],
    );
    expect(metadata.length).toBeGreaterThan(1);
    for (const { text } of metadata) {
      expect(text).not.toContain(NAME);
      expect(text).not.toContain(ORDER);
    }
    const state = await graph.getState(config);
    expect(state.values).toMatchObject({ order: ORDER, note: NAME });
    expect(state.tasks[0]?.interrupts[0]?.value).toMatchObject({ order: ORDER });
    // Resumed from the sealed state in another "process" (no key in memory).
    forgetKeys();
    await graph.invoke(new (await import("@langchain/langgraph")).Command({ resume: "approve" }), config);
    expect((await graph.getState(config)).values.log).toContain("decided approve");
  });

  it("after the key is destroyed, the thread reads as empty and takes no write; others are untouched", async () => {
    const erased = await pausedThread("erase-me@example.com");
    const other = await pausedThread("keep-me@example.com");
    const own = await pausedThread(null);
    const otherBefore = await stored(other.threadId);
    const tampered = await stored(own.threadId);
    expect(tampered.every((r) => r.type.startsWith("sealed:"))).toBe(true);

    const destroyed = await backend.database.db.transaction((tx) =>
      destroySubjectKeys(tx, [customerSubjectId("erase-me@example.com")], "test"),
    );
    expect(destroyed).toBe(1);
    const state = await erased.graph.getState(erased.config);
    expect(state.values).toEqual({ note: "", decision: "", log: [] });
    await expect(
      erased.graph.invoke({ order: ORDER }, erased.config),
      "a write to an erased subject's thread",
    ).rejects.toMatchObject({ code: "conflict:subject_erased" });
    // A second destruction is idempotent.
    expect(
      await backend.database.db.transaction((tx) =>
        destroySubjectKeys(tx, [customerSubjectId("erase-me@example.com")], "again"),
      ),
    ).toBe(0);
    expect(await stored(other.threadId)).toEqual(otherBefore);
    expect((await other.graph.getState(other.config)).values).toMatchObject({ note: NAME });

    // A sealed value changed by one byte does not open: tampering is an error, never a silently different state.
    await backend.database.sql.query(
      `UPDATE checkpoint.checkpoint_blobs SET blob = set_byte(blob, 20, (get_byte(blob, 20) + 1) % 256)
       WHERE thread_id = $1`,
      [own.threadId],
    );
    forgetKeys();
    await expect(own.graph.getState(own.config)).rejects.toThrow();
  });

  /** A run of `threadId` started now by `owner` (input: none), as a claim starts one. */
  async function runningRun(threadId: string, owner: string): Promise<string> {
    const id = randomUUID();
    await insertRun({
      db: backend.database.db,
      run: {
        id,
        threadId,
        kind: "input",
        input: null,
        fromCheckpointId: null,
        owner,
        startedBy: "user:test",
        startedByLabel: "Test",
        agentKey: "refund@1",
        leaseMs: 60_000,
      },
    });
    return id;
  }

  /** A run (ended at once: one active run per thread) and a queued input of `threadId`, each carrying `words`. */
  async function runAndQueued(threadId: string, words: string) {
    const { db } = backend.database;
    const runId = randomUUID();
    const input = { kind: "input", messageId: randomUUID(), text: words, ticket: { note: words } };
    const run = await insertRun({
      db,
      run: {
        id: runId,
        threadId,
        kind: "fork",
        input,
        fromCheckpointId: null,
        owner: "test",
        startedBy: "user:test",
        startedByLabel: "Test",
        agentKey: "refund@1",
        leaseMs: 60_000,
      },
    });
    expect(run.input, "insertRun returns the input as given").toEqual(input);
    await db.execute(sql`UPDATE runs SET status = 'succeeded' WHERE id = ${runId}`);
    const queuedId = randomUUID();
    const queued = await enqueueInput({
      db,
      entry: {
        id: queuedId,
        threadId,
        input: { ...input, text: `${words} (again)` },
        strategy: "enqueue",
        behindRunId: null,
        startedBy: "user:test",
        startedByLabel: "Test",
      },
    });
    expect((queued.input as { text: string }).text).toBe(`${words} (again)`);
    return { runId, queuedId, input };
  }

  async function storedInputs(threadId: string) {
    return backend.database.sql.query<{ input: string }>(
      `SELECT input::text AS input FROM runs WHERE thread_id = $1
       UNION ALL SELECT input::text FROM queued_inputs WHERE thread_id = $1`,
      [threadId],
    );
  }

  it("seals a run's input and a queued input; reads them back whole; after erasure they read as erased", async () => {
    const { db } = backend.database;
    const words = `${NAME} wrote: my parcel never came`;
    const thread = await filed("Inputs", "inputs@example.com");
    const { runId, queuedId, input } = await runAndQueued(thread.id, words);
    const rows = await storedInputs(thread.id);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(JSON.parse(row.input)).toEqual({ $sealed: expect.any(String) });
      const bytes = Buffer.from(JSON.parse(row.input).$sealed, "base64");
      for (const text of [row.input, bytes.toString("utf8"), bytes.toString("latin1")]) {
        expect(text).not.toContain(NAME);
        expect(text).not.toContain("parcel");
      }
    }
    forgetKeys();
    expect((await getRun({ db, runId }))?.input).toEqual(input);
    expect((await lastFork({ db, threadId: thread.id }))?.input).toEqual(input);
    expect((await getQueuedInput({ db, id: queuedId }))?.input).toMatchObject({ text: `${words} (again)` });
    expect((await listWaitingInputs({ db, threadId: thread.id })).map((q) => q.input)).toEqual([
      { ...input, text: `${words} (again)` },
    ]);
    const changed = { ...input, text: "changed" };
    expect((await setRunInput({ db, runId, input: changed }))?.input).toEqual(changed);
    expect((await storedInputs(thread.id)).every((r) => JSON.parse(r.input).$sealed)).toBe(true);
    expect((await getRun({ db, runId }))?.input).toEqual(changed);

    await db.transaction((tx) => destroySubjectKeys(tx, [customerSubjectId("inputs@example.com")], "test"));
    expect((await getRun({ db, runId }))?.input).toEqual({ erased: true });
    expect((await getQueuedInput({ db, id: queuedId }))?.input).toEqual({ erased: true });
    await expect(
      runAndQueued(thread.id, "more"),
      "a new run of an erased subject's thread",
    ).rejects.toMatchObject({
      code: "conflict:subject_erased",
    });
  });

  it("stores a thread without a subject's inputs in clear; the sealing job seals them later", async () => {
    const { db } = backend.database;
    const thread = await filed("Inputs later", null);
    // A thread of the release before keys: no subject, so nothing is sealed.
    await db.execute(sql`UPDATE threads SET subject_id = NULL, title = 'Inputs later', customer_message = 'x'
      WHERE id = ${thread.id}`);
    await db.execute(sql`DELETE FROM thread_search WHERE thread_id = ${thread.id}`);
    await db.execute(sql`DELETE FROM vault.subject_keys WHERE subject_id = ${`t_${thread.id}`}`);
    forgetKeys();
    const { runId, input } = await runAndQueued(thread.id, `${NAME} in clear`);
    expect((await storedInputs(thread.id)).every((r) => r.input.includes(NAME))).toBe(true);
    const mail = await queueEmail({
      db,
      decisionRef: randomUUID(),
      threadId: thread.id,
      to: "later@example.com",
      subject: NAME,
      body: `Dear ${NAME}`,
    });
    const storedMail = () =>
      backend.database.sql.query<{ text: string }>(
        `SELECT to_address || subject || body AS text FROM outbox WHERE thread_id = $1
         UNION ALL SELECT payload::text FROM effects WHERE thread_id = $1`,
        [thread.id],
      );
    expect((await storedMail()).every((r) => r.text.includes(NAME))).toBe(true);
    const timerId = randomUUID();
    await recordPendingDecisions({
      db,
      rows: [
        {
          interruptId: timerId,
          runId,
          checkpointId: "cp",
          threadId: thread.id,
          action: "wait_timer",
          payload: { durationMs: 30_000, reason: NAME },
          title: NAME,
          orderId: null,
          customerName: NAME,
          amountCents: null,
          currency: null,
        },
      ],
    });
    const storedDecision = async () =>
      (
        await backend.database.sql.query<{ text: string; wait_ms: string | null }>(
          "SELECT concat_ws('|', payload::text, title, customer_name) AS text, wait_ms FROM decisions WHERE interrupt_id = $1",
          [timerId],
        )
      )[0];
    expect((await storedDecision())?.text).toContain(NAME);
    // Error texts written in clear by the release before.
    await db.execute(sql`UPDATE runs SET error_message = ${`failed for ${NAME}`} WHERE id = ${runId}`);
    await db.execute(sql`UPDATE effects SET last_error = ${`550 ${NAME}`} WHERE id = ${mail.effect.id}`);
    const storedErrors = async () =>
      (
        await backend.database.sql.query<{ text: string }>(
          "SELECT error_message AS text FROM runs WHERE id = $1 UNION ALL SELECT last_error FROM effects WHERE id = $2",
          [runId, mail.effect.id],
        )
      ).map((r) => r.text);
    expect((await storedErrors()).every((t) => t.includes(NAME))).toBe(true);

    for (let pass = 0; pass < 20; pass++) {
      if ((await sealExistingThreads(backend.database, 500)).remaining === 0) break;
    }
    const rows = await storedInputs(thread.id);
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => !r.input.includes(NAME) && JSON.parse(r.input).$sealed)).toBe(true);
    expect((await storedMail()).some((r) => r.text.includes(NAME) || r.text.includes("later@"))).toBe(false);
    expect((await storedDecision())?.text).not.toContain(NAME);
    expect(Number((await storedDecision())?.wait_ms)).toBe(30_000);
    expect((await storedErrors()).every((t) => t.startsWith(SEALED_TEXT) && !t.includes(NAME))).toBe(true);
    expect((await getEffect({ db, effectId: mail.effect.id }))?.lastError).toBe(`550 ${NAME}`);
    expect((await listThreadDecisions({ db, threadId: thread.id }))[0]).toMatchObject({
      title: NAME,
      payload: { reason: NAME },
    });
    forgetKeys();
    expect((await getRun({ db, runId }))?.input).toEqual(input);
    expect((await listEmailsForThread({ db, threadId: thread.id }))[0]?.body).toBe(`Dear ${NAME}`);
    expect((await getEffect({ db, effectId: mail.effect.id }))?.payload).toMatchObject({ subject: NAME });
  });

  it("seals an email in the outbox and in its effect; delivers it opened; an erased customer's is never sent", async () => {
    const { db } = backend.database;
    const smtp = await startTestSmtpServer();
    try {
      const connectors = new Map([
        ["email", emailConnector({ from: "Shop <shop@example.com>", transport: { smtpUrl: smtp.url } })],
      ]);
      const emails = [];
      for (const who of ["mail-kept", "mail-erased"]) {
        const thread = await filed("Mail", `${who}@example.com`);
        const queued = await queueEmail({
          db,
          decisionRef: randomUUID(),
          threadId: thread.id,
          to: `${who}@example.com`,
          subject: `Your refund, ${NAME}`,
          body: `Dear ${NAME}, your parcel refund is on its way.`,
        });
        expect(queued.email.toAddress).toBe(`${who}@example.com`);
        expect(queued.effect.payload).toMatchObject({ to: `${who}@example.com` });
        emails.push({ threadId: thread.id, who, effectId: queued.effect.id });
      }
      for (const { threadId, who, effectId } of emails) {
        const raw = await backend.database.sql.query<Record<string, string>>(
          `SELECT to_address || subject || body AS text FROM outbox WHERE thread_id = $1
           UNION ALL SELECT payload::text FROM effects WHERE thread_id = $1`,
          [threadId],
        );
        expect(raw).toHaveLength(2);
        for (const row of raw) {
          for (const word of [NAME, who, "parcel"]) expect(row.text).not.toContain(word);
        }
        forgetKeys();
        expect((await listEmailsForThread({ db, threadId }))[0]).toMatchObject({
          toAddress: `${who}@example.com`,
          subject: `Your refund, ${NAME}`,
        });
        expect((await getEffect({ db, effectId }))?.payload).toMatchObject({ to: `${who}@example.com` });
      }

      const [kept, erased] = emails as [(typeof emails)[0], (typeof emails)[0]];
      await db.transaction((tx) =>
        destroySubjectKeys(tx, [customerSubjectId("mail-erased@example.com")], "test"),
      );
      expect((await listEmailsForThread({ db, threadId: erased.threadId }))[0]?.toAddress).toBe("[erased]");
      const retry = { maxAttempts: 3, baseMs: 10, maxMs: 20 };
      for (let i = 0; i < 5; i++)
        await dispatchDueEffects({ db, connectors, owner: "test-dispatcher", retry });
      // The SMTP server received the kept customer's email, opened, and nothing for the erased one.
      const ours = smtp.received.filter((m) => m.to.some((to) => to.startsWith("mail-")));
      expect(ours.map((m) => m.to)).toEqual([["mail-kept@example.com"]]);
      expect(ours[0]?.raw).toContain(`Dear ${NAME}`);
      const refused = await getEffect({ db, effectId: erased.effectId });
      expect(refused?.status).toBe("failed");
      expect(refused?.lastError).toMatch(/^conflict:subject_erased/);
      expect((await getEffect({ db, effectId: kept.effectId }))?.status).toBe("delivered");
    } finally {
      await smtp.close();
    }
  });

  it("seals the event log; compaction merges sealed parts; after erasure every event reads as erased, seqs kept", async () => {
    const { db } = backend.database;
    const thread = await filed("Events", "events@example.com");
    const runId = await runningRun(thread.id, "events-test");
    const said = [`Dear ${NAME}, `, "your parcel ", "refund is approved."];
    const batch = [
      { type: "RUN_STARTED", threadId: thread.id, runId },
      { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
      ...said.map((delta) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta })),
      { type: "TEXT_MESSAGE_END", messageId: "m1" },
      { type: "MESSAGES_SNAPSHOT", messages: [{ id: "u1", role: "user", content: `I am ${NAME}` }] },
      { type: "MESSAGES_SNAPSHOT", messages: [{ id: "u1", role: "user", content: `I am ${NAME}, again` }] },
      { type: "RUN_FINISHED", threadId: thread.id, runId },
    ].map((event, i) => ({ seq: i + 1, runId, type: event.type, event }));
    expect(await appendEvents({ db, threadId: thread.id, runId, owner: "events-test", batch })).toBe(true);
    const raw = () =>
      backend.database.sql.query<{ seq: string; type: string; event: string }>(
        "SELECT seq::text AS seq, type, event::text AS event FROM events WHERE thread_id = $1 ORDER BY seq",
        [thread.id],
      );
    for (const row of await raw()) {
      expect(JSON.parse(row.event)).toEqual({ $sealed: expect.any(String) });
      expect(row.event).not.toContain("parcel");
    }
    forgetKeys();
    expect((await readEvents({ db, threadId: thread.id, afterSeq: 0 })).map((e) => e.event)).toEqual(
      batch.map((e) => e.event),
    );

    await db.execute(sql`UPDATE runs SET status = 'succeeded' WHERE id = ${runId}`);
    const compacted = await db.transaction((tx) => compactThreadEvents({ db: tx, threadId: thread.id }));
    expect(compacted).toEqual({ eventsDeleted: 5, compactedSeq: batch.length });
    const after = await readRunEvents({ db, threadId: thread.id, runId });
    expect(after.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_CHUNK",
      "MESSAGES_SNAPSHOT",
      "RUN_FINISHED",
    ]);
    expect(after[1]?.event).toEqual({
      type: "TEXT_MESSAGE_CHUNK",
      messageId: "m1",
      role: "assistant",
      delta: said.join(""),
    });
    expect((await raw()).every((r) => !r.event.includes("parcel") && JSON.parse(r.event).$sealed)).toBe(true);

    await db.transaction((tx) => destroySubjectKeys(tx, [customerSubjectId("events@example.com")], "test"));
    const erased = await readEvents({ db, threadId: thread.id, afterSeq: 0 });
    expect(erased.map((e) => e.seq)).toEqual(after.map((e) => e.seq));
    expect(erased.every((e) => e.event.type === "CUSTOM" && e.event.name === "erased")).toBe(true);
  });

  it("mid-rollout beside a release that reads sealed checkpoints but not sealed rows: rows in clear, checkpoints sealed", async () => {
    const { db } = backend.database;
    await db.execute(sql`INSERT INTO instances (id, hostname, pid, seen_at, reads)
      VALUES ('keys-release', 'old-host', 1, now(), ARRAY['sealed'])`);
    forgetKeys();
    try {
      const { threadId } = await pausedThread("rollout@example.com");
      expect((await stored(threadId)).every((r) => r.type.startsWith("sealed:"))).toBe(true);
      await runAndQueued(threadId, `${NAME} mid-rollout`);
      expect((await storedInputs(threadId)).every((r) => r.input.includes(NAME))).toBe(true);
    } finally {
      await db.execute(sql`DELETE FROM instances WHERE id = 'keys-release'`);
      forgetKeys();
    }
  });

  it("seals a decision's question and answer; the inbox and the ledger read them opened; a timer keeps its deadline", async () => {
    const { db } = backend.database;
    const thread = await filed("Ledger", "ledger@example.com");
    const asked = { interruptId: randomUUID(), runId: randomUUID(), checkpointId: "cp" };
    await recordPendingDecisions({
      db,
      rows: [
        {
          ...asked,
          threadId: thread.id,
          action: "refund_approval",
          payload: { customer: NAME, note: "parcel never came", amountCents: 4200 },
          title: `Refund for ${NAME}`,
          orderId: ORDER,
          customerName: NAME,
          amountCents: 4200,
          currency: "EUR",
        },
        {
          interruptId: randomUUID(),
          runId: asked.runId,
          checkpointId: "cp",
          threadId: thread.id,
          action: "wait_timer",
          payload: { durationMs: 90_000, reason: `Call ${NAME} back` },
          title: "Wait",
          orderId: null,
          customerName: null,
          amountCents: null,
          currency: null,
        },
      ],
    });
    const raw = () =>
      backend.database.sql.query<{ text: string; action: string; due_ms: number; outcome: string | null }>(
        `SELECT concat_ws('|', payload::text, title, customer_name, answer::text) AS text, action, outcome,
           (extract(epoch FROM due_at - created_at) * 1000)::int AS due_ms
         FROM decisions WHERE thread_id = $1 ORDER BY action`,
        [thread.id],
      );
    for (const row of await raw()) {
      expect(row.text).not.toContain(NAME);
      expect(row.text).not.toContain("parcel");
    }
    expect((await raw()).find((r) => r.action === "wait_timer")?.due_ms).toBe(90_000);
    forgetKeys();
    const inbox = await listInbox({ db, status: "pending", limit: 100 });
    const item = inbox.items.find(
      (i) => i.kind === "decision" && i.decision.interruptId === asked.interruptId,
    ) as { decision: { title: string; customerName: string } } | undefined;
    expect(item?.decision).toMatchObject({ title: `Refund for ${NAME}`, customerName: NAME });

    expect(
      await resolveDecision({
        db,
        interruptId: asked.interruptId,
        resumeStatus: "resolved",
        answer: { decision: "approve", note: `${NAME} is a regular` },
        resolvedBy: "Olga",
        resumeRunId: randomUUID(),
      }),
    ).toBe(true);
    const approved = (await raw()).find((r) => r.action === "refund_approval");
    expect(approved?.outcome).toBe("approve");
    expect(approved?.text).not.toContain("regular");
    forgetKeys();
    const ledger = await listThreadDecisions({ db, threadId: thread.id });
    expect(ledger.find((d) => d.interruptId === asked.interruptId)).toMatchObject({
      payload: { customer: NAME },
      title: `Refund for ${NAME}`,
      customerName: NAME,
      answer: { decision: "approve", note: `${NAME} is a regular` },
    });

    await db.transaction((tx) => destroySubjectKeys(tx, [customerSubjectId("ledger@example.com")], "test"));
    const erased = (await listThreadDecisions({ db, threadId: thread.id })).find(
      (d) => d.interruptId === asked.interruptId,
    );
    expect(erased).toMatchObject({
      payload: { erased: true },
      title: "[erased]",
      customerName: "[erased]",
      answer: { erased: true },
      amountCents: 4200,
    });
  });

  /** A thread's ticket as stored, and its blind index (null: none). */
  async function storedTicket(threadId: string) {
    const [row] = await backend.database.sql.query<{
      text: string;
      tsv: string | null;
      terms: string[] | null;
    }>(
      `SELECT concat_ws('|', t.title, t.customer_message, t.ticket::text) AS text, t.search_tsv::text AS tsv,
         s.terms FROM threads t LEFT JOIN thread_search s ON s.thread_id = t.id WHERE t.id = $1`,
      [threadId],
    );
    return row;
  }

  /** An account and the changes made to it, as stored. */
  async function storedAccount(email: string) {
    return (
      await backend.database.sql.query<{ text: string }>(
        `SELECT concat_ws('|', account_email, customer_name, from_value, to_value) AS text FROM account_changes
           WHERE lower(account_email) = $1 OR thread_id IN (SELECT id FROM threads WHERE subject_id = $3)
         UNION ALL SELECT concat_ws('|', email, address, payout) FROM customer_accounts WHERE id = $2`,
        [email, accountIdOf(email), customerSubjectId(email)],
      )
    ).map((r) => r.text);
  }

  async function storedOrderText(id: string) {
    const [row] = await backend.database.sql.query<{ text: string; subject_id: string | null }>(
      "SELECT concat_ws('|', customer_name, customer_email) AS text, subject_id FROM orders WHERE id = $1",
      [id],
    );
    return row;
  }

  it("seals the ticket; reads it back whole; search finds its words through a blind index; erasure leaves nothing", async () => {
    const { db } = backend.database;
    const email = "ticket-words@example.com";
    const title = `Kettle for ${NAME}`;
    const message = "My quokkaphone stopped chirping after the Zyxwvu update";
    await db.execute(sql`INSERT INTO orders (id, customer_name, customer_email, amount_cents, placed_at, payment_method,
        items, status)
      VALUES ('ORD-TICKET-1', ${NAME}, ${email}, 100, now(), 'card', '[]', 'delivered')`);
    const thread = await createThread({
      db,
      title,
      customerMessage: message,
      orderRef: "ORD-TICKET-1",
      ticket: { note: NAME },
      subjectEmail: email,
    });
    expect(thread).toMatchObject({ title, customerMessage: message, ticket: { note: NAME } });
    const raw = await storedTicket(thread.id);
    expect(raw?.text.startsWith(SEALED_TEXT)).toBe(true);
    for (const word of ["Kettle", "Quaxwell", "quokka", "chirping", "Zyxwvu"]) {
      expect(raw?.text).not.toContain(word);
      expect(JSON.stringify(raw?.terms)).not.toContain(word.toLowerCase());
    }
    expect(raw?.tsv, "a sealed ticket has no vector of its envelope").toBeNull();
    expect(raw?.terms?.length).toBeGreaterThan(10);

    forgetKeys();
    expect(await getThread({ db, threadId: thread.id })).toMatchObject({ title, customerMessage: message });
    expect((await getThreads({ db, threadIds: [thread.id] })).get(thread.id)?.ticket).toEqual({ note: NAME });
    expect((await listRecentThreads({ db, limit: 500 })).find((t) => t.id === thread.id)?.title).toBe(title);
    const page = await listInbox({ db, status: "all", limit: 200 });
    expect(page.items.find((i) => "thread" in i && i.thread.threadId === thread.id)).toMatchObject({
      thread: { title },
    });
    const found = async (q: string) =>
      (await searchThreads({ db, q }))
        .filter((h) => h.threadId === thread.id)
        .map((h) => `${h.title} ${h.matched}`);
    // Whole words, prefixes, several words (all must match), in any case; a word not in the ticket finds nothing.
    for (const q of ["quokkaphone", "quokk", "CHIRP zyxwvu", "kettle quaxwell", "qu st"]) {
      expect(await found(q), q).toEqual([`${title} text`]);
    }
    // ("sealed" is in the customer's name: found as a name, never as the envelope's word.)
    for (const q of ["quokkaphones", "okkaphone", "sealed", "chirping banana", "v1"]) {
      expect(
        (await found(q)).filter((hit) => hit.endsWith(" text")),
        q,
      ).toEqual([]);
    }

    await eraseCustomer({ db, email, actor: { id: "user:dpo", label: "DPO", role: "admin" } });
    forgetKeys();
    const after = await storedTicket(thread.id);
    expect(after?.text, "the ticket is not rewritten: its key is gone").toBe(raw?.text);
    expect(after?.terms, "its words' index is deleted").toBeNull();
    expect(await getThread({ db, threadId: thread.id })).toMatchObject({
      title: ERASED_TEXT,
      customerMessage: ERASED_TEXT,
      ticket: { erased: true },
    });
    for (const q of ["quokkaphone", "kettle", "Quaxwell"]) expect(await found(q), q).toEqual([]);
  });

  it("seals an order's customer; reads it opened; search finds them by email and name; erasure leaves nothing", async () => {
    const { db } = backend.database;
    const order = (id: string, customerName: string, customerEmail: string) => ({
      id,
      customerName,
      customerEmail,
      amountCents: 4200,
      placedAt: new Date(),
      paymentMethod: "card",
      items: [{ sku: "X", name: "Thing", quantity: 1, unitCents: 4200 }],
      status: "delivered",
    });
    const storedOrder = async (id: string) =>
      (
        await backend.database.sql.query<{ text: string; subject_id: string | null; tsv: string | null }>(
          `SELECT concat_ws('|', o.customer_name, o.customer_email, n.terms::text) AS text, o.subject_id,
             o.name_tsv::text AS tsv FROM orders o LEFT JOIN order_names n ON n.order_id = o.id WHERE o.id = $1`,
          [id],
        )
      )[0];
    expect(
      await insertOrdersIfMissing({
        db,
        rows: [
          order("ORD-SEALED-A1", "Wilhelmina Quorndt", "w.quorndt@example.com"),
          order("ORD-SEALED-A2", "Wilhelmina Quorndt", "W.Quorndt@example.com"),
          order("ORD-SEALED-B1", "Barnaby Quorndt", "barnaby@example.com"),
        ],
      }),
    ).toBe(3);
    const rawA = await storedOrder("ORD-SEALED-A1");
    const rawB = await storedOrder("ORD-SEALED-B1");
    for (const raw of [rawA, rawB]) {
      expect(raw?.text.startsWith(SEALED_TEXT)).toBe(true);
      for (const word of [
        "Wilhelmina",
        "wilhelmina",
        "Quorndt",
        "quorndt",
        "Barnaby",
        "barnaby",
        "example",
      ]) {
        expect(raw?.text).not.toContain(word);
      }
      expect(raw?.tsv).toBeNull();
    }
    expect(rawA?.subject_id).toBe(customerSubjectId("w.quorndt@example.com"));
    forgetKeys();
    expect(await getOrder({ db, orderId: "ORD-SEALED-A2" })).toMatchObject({
      customerName: "Wilhelmina Quorndt",
      customerEmail: "W.Quorndt@example.com",
    });
    expect((await listOrders({ db, limit: 1000 })).find((o) => o.id === "ORD-SEALED-B1")?.customerName).toBe(
      "Barnaby Quorndt",
    );
    const threadA = await createThread({
      db,
      title: "Where is my parcel",
      customerMessage: "Still waiting",
      orderRef: "ORD-SEALED-A1",
      subjectId: rawA?.subject_id,
    });
    const threadB = await createThread({
      db,
      title: "Where is my parcel",
      customerMessage: "Still waiting",
      orderRef: "ORD-SEALED-B1",
      subjectEmail: "barnaby@example.com",
    });
    const hits = async (q: string) =>
      (await searchThreads({ db, q }))
        .filter((h) => [threadA.id, threadB.id].includes(h.threadId))
        .map(
          (h) => `${h.threadId === threadA.id ? "A" : "B"} ${h.matched} ${h.customerName} ${h.customerEmail}`,
        );
    forgetKeys();
    expect(await hits("w.quorndt@EXAMPLE.com")).toEqual(["A email Wilhelmina Quorndt w.quorndt@example.com"]);
    expect(await hits("wilhelm")).toEqual(["A name Wilhelmina Quorndt w.quorndt@example.com"]);
    expect((await hits("Quorndt")).sort()).toEqual([
      "A name Wilhelmina Quorndt w.quorndt@example.com",
      "B name Barnaby Quorndt barnaby@example.com",
    ]);
    expect(await hits("quorndts")).toEqual([]);

    const dpo = { id: "user:dpo", label: "DPO", role: "admin" as const };
    const report = await eraseCustomer({ db, email: "w.quorndt@example.com", actor: dpo });
    expect(report.rows["order_names.terms"]).toBe(2);
    forgetKeys();
    const erasedA = await storedOrder("ORD-SEALED-A1");
    expect(erasedA?.text, "the order is not rewritten (its key is gone), its names' index is deleted").toBe(
      rawA?.text.split("|").slice(0, 2).join("|"),
    );
    expect(await storedOrder("ORD-SEALED-B1"), "another customer's order is untouched").toEqual(rawB);
    expect(await getOrder({ db, orderId: "ORD-SEALED-A1" })).toMatchObject({
      customerName: ERASED_TEXT,
      customerEmail: ERASED_TEXT,
    });
    expect(await hits("w.quorndt@example.com")).toEqual([]);
    expect(await hits("Quorndt")).toEqual(["B name Barnaby Quorndt barnaby@example.com"]);
    // The trail names them by their subject (a keyed blind index), not by a plain hash anyone can test guesses against.
    expect(report.customerRef).toBe(customerSubjectId("w.quorndt@example.com"));
    const sha = createHash("sha256").update("w.quorndt@example.com").digest("hex");
    const [entry] = await backend.database.sql.query<{ detail: string }>(
      "SELECT detail::text AS detail FROM audit_log WHERE id = $1",
      [report.erasureId],
    );
    expect(entry?.detail).not.toContain(sha.slice(0, 16));
    // A second erasure finds nothing of theirs left.
    expect(await eraseCustomer({ db, email: "w.quorndt@example.com", actor: dpo })).toMatchObject({
      alreadyErased: true,
      erasureId: report.erasureId,
    });
    // One recorded before, under the plain hash the trail used then, is found too.
    await recordAudit({
      db,
      entries: [
        {
          action: "erasure",
          actor: dpo,
          detail: {
            customerRef: createHash("sha256")
              .update("erased-long-ago@example.com")
              .digest("hex")
              .slice(0, 16),
          },
        },
      ],
    });
    expect(await eraseCustomer({ db, email: "erased-long-ago@example.com", actor: dpo })).toMatchObject({
      alreadyErased: true,
    });
  });

  it("seals an account change and the account it changes; reads them opened; erasure leaves nothing readable", async () => {
    const { db } = backend.database;
    const email = "iban-owner@example.com";
    const iban = "DE89370400440532013000";
    const thread = await filed("Payout change", email);
    const { change } = await recordAccountChange({
      db,
      decisionRef: randomUUID(),
      threadId: thread.id,
      accountEmail: email,
      customerName: NAME,
      field: "payout",
      from: "DE02120300000000202051",
      to: iban,
    });
    expect(change).toMatchObject({ accountEmail: email, customerName: NAME, toValue: iban });
    await applyAccountChange({ db, changeId: change.id });
    const stored = async () =>
      (
        await backend.database.sql.query<{ text: string }>(
          `SELECT concat_ws('|', account_email, customer_name, from_value, to_value) AS text FROM account_changes
             WHERE thread_id = $1
           UNION ALL SELECT concat_ws('|', email, address, payout) FROM customer_accounts WHERE id = $2`,
          [thread.id, accountIdOf(email)],
        )
      ).map((r) => r.text);
    const before = await stored();
    expect(before).toHaveLength(2);
    for (const text of before) {
      expect(text.startsWith(SEALED_TEXT)).toBe(true);
      for (const word of [iban, "DE02120300000000202051", "iban-owner", NAME])
        expect(text).not.toContain(word);
    }
    forgetKeys();
    expect(await getCustomerAccount({ db, email })).toMatchObject({ email, payout: iban });
    expect(await listAccountChangesForThread({ db, threadId: thread.id })).toMatchObject([
      { accountEmail: email, customerName: NAME, fromValue: "DE02120300000000202051", toValue: iban },
    ]);
    await db.transaction((tx) => destroySubjectKeys(tx, [customerSubjectId(email)], "test"));
    expect(await stored(), "nothing rewritten: the key is gone").toEqual(before);
    expect(await getCustomerAccount({ db, email })).toMatchObject({
      email: ERASED_TEXT,
      payout: ERASED_TEXT,
    });
    expect(await listAccountChangesForThread({ db, threadId: thread.id })).toMatchObject([
      { accountEmail: ERASED_TEXT, toValue: ERASED_TEXT },
    ]);
  });

  it("seals what an audit entry says of a thread; the trail reads it opened and verifies; erasure rewrites no row", async () => {
    const { db } = backend.database;
    const email = "audited@example.com";
    const thread = await filed("Audited", email);
    const actor = { id: "user:op", label: "op@example.com", role: "operator" as const };
    await recordAudit({
      db,
      entries: [
        {
          action: "decision",
          actor,
          threadId: thread.id,
          payload: { title: `Refund ${NAME}?` },
          answer: { decision: "reject", note: `${NAME} asked twice` },
          detail: { message: `${NAME} wrote again` },
        },
        { action: "user_created", actor, detail: { email: "new-staff@example.com" } },
      ],
    });
    const stored = async () =>
      backend.database.sql.query<{ text: string; thread_id: string | null }>(
        `SELECT concat_ws('|', payload::text, answer::text, detail::text) AS text, thread_id FROM audit_log
         WHERE thread_id = $1 OR detail ->> 'email' = 'new-staff@example.com' ORDER BY id`,
        [thread.id],
      );
    const before = await stored();
    expect(before).toHaveLength(2);
    expect(before[0]?.text).not.toContain(NAME);
    expect(before[0]?.text).toContain("$sealed");
    expect(before[1]?.text, "an entry about no thread stays as it is").toContain("new-staff@example.com");
    forgetKeys();
    const listed = await listAudit({ db, filter: { threadId: thread.id, limit: 10 } });
    expect(listed.items[0]).toMatchObject({
      payload: { title: `Refund ${NAME}?` },
      answer: { note: `${NAME} asked twice` },
      detail: { message: `${NAME} wrote again` },
      actor: "op@example.com",
    });
    expect((await verifyAuditTrail({ db })).problems).toEqual([]);

    await db.execute(sql`INSERT INTO orders (id, customer_name, customer_email, amount_cents, placed_at,
        payment_method, items, status)
      VALUES ('ORD-AUDITED-1', 'Audited Person', ${email}, 100, now(), 'card', '[]', 'delivered')`);
    await db.execute(sql`UPDATE threads SET order_ref = 'ORD-AUDITED-1' WHERE id = ${thread.id}`);
    const report = await eraseCustomer({ db, email, actor: { id: "user:dpo", label: "DPO", role: "admin" } });
    expect(report.auditRows, "nothing of the trail rewritten: the key is gone").toBe(0);
    expect(await stored()).toEqual(before);
    forgetKeys();
    expect((await listAudit({ db, filter: { threadId: thread.id, limit: 10 } })).items[0]).toMatchObject({
      payload: { erased: true },
      answer: { erased: true },
      detail: { erased: true },
      actor: "op@example.com",
    });
    expect((await verifyAuditTrail({ db })).problems).toEqual([]);
    // An entry written about their thread afterwards records them as erased, never in clear.
    await recordAudit({
      db,
      entries: [{ action: "decision", actor, threadId: thread.id, answer: { note: `${NAME} again` } }],
    });
    const [last] = await backend.database.sql.query<{ answer: string }>(
      "SELECT answer::text AS answer FROM audit_log WHERE thread_id = $1 ORDER BY id DESC LIMIT 1",
      [thread.id],
    );
    expect(JSON.parse(last!.answer)).toEqual({ erased: true });
  });

  it("seals what a notification says of a thread; delivery reads it opened; an erased customer's says only that", async () => {
    const { db } = backend.database;
    const email = "notified@example.com";
    const thread = await filed("Notified", email);
    const target = await insertTarget({
      db,
      target: {
        kind: "webhook",
        target: "https://hooks.example.com/sealed",
        events: ["escalated"],
        minAmountCents: null,
        secret: null,
      },
    });
    const notify = (subjectId: string) =>
      enqueueNotifications({
        db,
        event: "escalated",
        subjectId,
        payload: { threadId: thread.id, title: `Refund ${NAME}?`, link: `/threads/${thread.id}` },
      });
    expect(await notify("n-1")).toBe(1);
    const storedPayloads = async () =>
      backend.database.sql.query<{ payload: string }>(
        "SELECT payload::text AS payload FROM notifications WHERE target_id = $1 ORDER BY idempotency_key",
        [target.id],
      );
    const [stored] = await storedPayloads();
    expect(stored?.payload).not.toContain(NAME);
    expect(JSON.parse(stored!.payload)).toMatchObject({ event: "escalated", threadId: thread.id });
    forgetKeys();
    const due = (await claimDueNotifications({ db, limit: 100, leaseMs: 60_000 })).filter(
      (n) => n.target === "https://hooks.example.com/sealed",
    );
    expect(due.map((n) => n.payload)).toEqual([
      { event: "escalated", threadId: thread.id, title: `Refund ${NAME}?`, link: `/threads/${thread.id}` },
    ]);
    await db.transaction((tx) => destroySubjectKeys(tx, [customerSubjectId(email)], "test"));
    expect(await notify("n-2")).toBe(1);
    const after = await storedPayloads();
    expect(after[1]?.payload).not.toContain(NAME);
    expect(JSON.parse(after[1]!.payload)).toEqual({ event: "escalated", threadId: thread.id, erased: true });
    await db.execute(sql`UPDATE notifications SET next_attempt_at = now() WHERE target_id = ${target.id}`);
    const erased = (await claimDueNotifications({ db, limit: 100, leaseMs: 60_000 })).filter(
      (n) => n.target === "https://hooks.example.com/sealed",
    );
    expect(erased.map((n) => n.payload)).toEqual([
      { event: "escalated", threadId: thread.id, erased: true },
      { event: "escalated", threadId: thread.id, erased: true },
    ]);
    await deleteTarget({ db, id: target.id });
  });

  it("seals the error texts of a thread (a run's, an effect's, an expiry answer's); reads them opened", async () => {
    const { db } = backend.database;
    const thread = await filed("Errors", "errors@example.com");
    const runId = await runningRun(thread.id, "errs");
    const message = `tool lookup failed: no order for ${NAME}`;
    expect(
      await closeRun(db, {
        threadId: thread.id,
        runId,
        owner: "errs",
        status: "failed",
        error: { code: "internal:tool", message },
        events: [{ seq: 1, runId, type: "RUN_ERROR", event: { type: "RUN_ERROR", message } }],
        threadStatus: "failed",
        contextOrder: null,
        head: null,
      }),
    ).toMatchObject({ closed: true });
    const mail = await queueEmail({
      db,
      decisionRef: randomUUID(),
      threadId: thread.id,
      to: "errors@example.com",
      subject: "Hello",
      body: "Hi",
    });
    await db.execute(sql`UPDATE effects SET status = 'sending', owner = 'errs' WHERE id = ${mail.effect.id}`);
    const smtp = `550 5.1.1 <errors@example.com>: ${NAME} unknown`;
    await markEffectAttemptFailed({
      db,
      effectId: mail.effect.id,
      threadId: thread.id,
      owner: "errs",
      error: smtp,
      retryInMs: null,
    });
    const decision = randomUUID();
    await recordPendingDecisions({
      db,
      rows: [
        {
          interruptId: decision,
          runId,
          checkpointId: "cp",
          threadId: thread.id,
          action: "refund_approval",
          payload: {},
          title: "t",
          orderId: null,
          customerName: null,
          amountCents: null,
          currency: null,
        },
      ],
    });
    await markExpiryFailed({ db, threadId: thread.id, interruptId: decision, error: `forbidden:x: ${NAME}` });
    const [stored] = await backend.database.sql.query<{ text: string }>(
      `SELECT concat_ws('|', (SELECT error_message FROM runs WHERE id = $1),
         (SELECT last_error FROM effects WHERE id = $2), (SELECT expiry_error FROM decisions WHERE interrupt_id = $3))
         AS text`,
      [runId, mail.effect.id, decision],
    );
    expect(stored?.text.split("|").every((t) => t.startsWith(SEALED_TEXT))).toBe(true);
    expect(stored?.text).not.toContain(NAME);
    forgetKeys();
    expect(await getLastFailedRun({ db, threadId: thread.id })).toMatchObject({ errorMessage: message });
    expect((await getRun({ db, runId }))?.errorMessage).toBe(message);
    expect((await getEffect({ db, effectId: mail.effect.id }))?.lastError).toBe(smtp);
  });

  it("mid-rollout beside a release that does not read sealed tickets: the ticket in clear, sealed by the job later", async () => {
    const { db } = backend.database;
    await db.execute(sql`INSERT INTO instances (id, hostname, pid, seen_at, reads)
      VALUES ('rows-release', 'old-host', 1, now(), ARRAY['sealed', 'sealed-rows'])`);
    forgetKeys();
    let threadId = "";
    let noticeTarget = "";
    const storedNotice = async (targetId: string) =>
      (
        await backend.database.sql.query<{ payload: string }>(
          "SELECT payload::text AS payload FROM notifications WHERE target_id = $1",
          [targetId],
        )
      )[0]?.payload ?? "";
    try {
      await insertOrdersIfMissing({
        db,
        rows: [
          {
            id: "ORD-ROLLOUT-1",
            customerName: "Perpetua Glimmerwick",
            customerEmail: "perpetua@example.com",
            amountCents: 100,
            placedAt: new Date(),
            paymentMethod: "card",
            items: [],
            status: "delivered",
          },
        ],
      });
      expect((await storedOrderText("ORD-ROLLOUT-1"))?.text).toContain("Perpetua");
      const thread = await filed(
        `Rollout ticket of ${NAME} about a glimmerwick`,
        "ticket-rollout@example.com",
      );
      threadId = thread.id;
      const { change } = await recordAccountChange({
        db,
        decisionRef: randomUUID(),
        threadId,
        accountEmail: "ticket-rollout@example.com",
        customerName: NAME,
        field: "address",
        from: null,
        to: "12 Glimmerwick Lane",
      });
      await applyAccountChange({ db, changeId: change.id });
      expect((await storedAccount("ticket-rollout@example.com")).join("\n")).toContain("Glimmerwick Lane");
      const target = await insertTarget({
        db,
        target: {
          kind: "webhook",
          target: "https://hooks.example.com/rollout",
          events: ["escalated"],
          minAmountCents: null,
          secret: null,
        },
      });
      await enqueueNotifications({
        db,
        event: "escalated",
        subjectId: "rollout-notice",
        payload: { threadId, title: "About a glimmerwick" },
      });
      noticeTarget = target.id;
      expect(await storedNotice(noticeTarget)).toContain("glimmerwick");
      const raw = await storedTicket(threadId);
      expect(raw?.text).toContain("glimmerwick");
      expect(raw?.terms).toBeNull();
      expect((await searchThreads({ db, q: "glimmerw" })).map((h) => h.threadId)).toEqual([threadId]);
      await expect(sealExistingThreads(backend.database, 500)).rejects.toMatchObject({
        code: "conflict:sealing_waits",
      });
    } finally {
      await db.execute(
        sql`UPDATE instances SET stopped_at = now() - interval '1 minute' WHERE id = 'rows-release'`,
      );
      forgetKeys();
    }
    try {
      for (let pass = 0; pass < 20; pass++) {
        if ((await sealExistingThreads(backend.database, 500)).remaining === 0) break;
      }
      const order = await storedOrderText("ORD-ROLLOUT-1");
      expect(order?.text.startsWith(SEALED_TEXT)).toBe(true);
      expect(order?.text).not.toContain("Perpetua");
      expect(order?.subject_id).toBe(customerSubjectId("perpetua@example.com"));
      expect(await getOrder({ db, orderId: "ORD-ROLLOUT-1" })).toMatchObject({
        customerName: "Perpetua Glimmerwick",
      });
      expect(await storedNotice(noticeTarget)).not.toContain("glimmerwick");
      expect(await storedNotice(noticeTarget)).toContain('"sealed"');
      for (const text of await storedAccount("ticket-rollout@example.com")) {
        expect(text.startsWith(SEALED_TEXT)).toBe(true);
        expect(text).not.toContain("Glimmerwick");
      }
      expect(await getCustomerAccount({ db, email: "ticket-rollout@example.com" })).toMatchObject({
        address: "12 Glimmerwick Lane",
      });
      const sealed = await storedTicket(threadId);
      expect(sealed?.text.startsWith(SEALED_TEXT)).toBe(true);
      expect(sealed?.text).not.toContain("glimmerwick");
      expect(sealed?.tsv).toBeNull();
      expect(sealed?.terms?.length).toBeGreaterThan(5);
      forgetKeys();
      expect((await getThread({ db, threadId }))?.title).toBe(
        `Rollout ticket of ${NAME} about a glimmerwick`,
      );
      expect((await searchThreads({ db, q: "glimmerw" })).map((h) => `${h.threadId} ${h.title}`)).toEqual([
        `${threadId} Rollout ticket of ${NAME} about a glimmerwick`,
      ]);
    } finally {
      await db.execute(sql`DELETE FROM instances WHERE id = 'rows-release'`);
    }
  });

  it("a thread the saver does not know (no subject) is stored as before", async () => {
    const saver = new DrizzleCheckpointSaver(backend.database.sql);
    const threadId = `plain-${randomUUID()}`;
    await buildApprovalGraph(saver).invoke({ order: ORDER }, { configurable: { thread_id: threadId } });
    const rows = await stored(threadId);
    expect(rows.some((r) => r.type === "json" || r.type === "msgpack")).toBe(true);
    expect(rows.some((r) => r.type.startsWith("sealed:"))).toBe(false);
  });
});
