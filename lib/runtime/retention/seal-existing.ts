import "server-only";
import { sql } from "drizzle-orm";
import { PUSH_PREFIX } from "@/lib/checkpoint/history";
import { AppError } from "@/lib/contract/errors";
import type { Database } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { waitMsOf } from "@/lib/db/queries/decisions";
import { getActiveRun } from "@/lib/db/queries/runs";
import { lockThread } from "@/lib/db/queries/threads";
import { rowsOf } from "@/lib/db/rows";
import { ticketTerms } from "@/lib/db/search-terms";
import {
  customerSubjectId,
  ensureSubjectKey,
  isSealedJson,
  keySealer,
  openThreadText,
  SEALED,
  SEALED_TEXT,
  sealedType,
  sealingAllowed,
  sealValue,
  threadKey,
  threadSubjectId,
} from "@/lib/db/vault";
import { accountIdOf } from "@/lib/shop/accounts";
import { ERASED_EMAIL } from "./erasure";

/*
 * The move of an existing database to sealed storage (issue 49): threads filed before personal data was kept under
 * keys get their subject (the customer of their order, or one of their own) and key, and their checkpoint values and
 * writes, their tickets (with a blind index of the words), run inputs and queued inputs, effects' payloads, outbox
 * emails, the event log and the decisions' questions and answers are sealed in place — online (a thread whose run is going is left for the next pass), in batches of threads
 * (each its own transaction), resumable (a pass finds only what is still in clear) and audited. Only the thread's own
 * rows are rewritten.
 */

export interface SealProgress {
  /** Threads given a subject in this pass. */
  subjects: number;
  /** Threads whose values were sealed in this pass. */
  threads: number;
  /** Values and writes sealed in this pass. */
  values: number;
  /** Threads with a run going, left for the next pass. */
  busy: number;
  /** Threads still holding values in clear (or without a subject) after this pass. */
  remaining: number;
}

const UNSEALED = (alias: string) =>
  sql.raw(`${alias}.type NOT LIKE '${SEALED}%' AND ${alias}.type NOT IN ('empty', 'null', 'undefined')`);

/** A run's or queued input's JSON (`alias.input`) stored in clear. */
const INPUT_IN_CLEAR = (alias: string) =>
  sql.raw(
    `${alias}.input IS NOT NULL AND jsonb_typeof(${alias}.input) <> 'null' AND ${alias}.input ->> '$sealed' IS NULL`,
  );

/** An effect's payload in clear (a payment's stays plain: lib/shop/refunds.ts). */
const EFFECT_IN_CLEAR = (alias: string) =>
  sql.raw(`${alias}.kind <> 'payment' AND ${alias}.payload ->> '$sealed' IS NULL`);

/** A decision whose question or answer is in clear. */
const DECISION_IN_CLEAR = (alias: string) =>
  sql.raw(`((jsonb_typeof(${alias}.payload) <> 'null' AND ${alias}.payload ->> '$sealed' IS NULL)
    OR (${alias}.answer IS NOT NULL AND jsonb_typeof(${alias}.answer) <> 'null' AND ${alias}.answer ->> '$sealed' IS NULL)
    OR ${alias}.title NOT LIKE '${SEALED_TEXT}%' OR ${alias}.customer_name NOT LIKE '${SEALED_TEXT}%')`);

/** An outbox email in clear. */
const EMAIL_IN_CLEAR = (alias: string) => sql.raw(`${alias}.to_address NOT LIKE '${SEALED_TEXT}%'`);

/** An account change in clear (its values are sealed together). */
const CHANGE_IN_CLEAR = (alias: string) => sql.raw(`${alias}.to_value NOT LIKE '${SEALED_TEXT}%'`);

/** A notification about a thread whose payload is in clear (lib/db/queries/notifications.ts seals it). */
const NOTICE_IN_CLEAR = (alias: string) =>
  sql.raw(`${alias}.payload -> 'sealed' IS NULL AND ${alias}.payload -> 'erased' IS NULL`);

/** An error text (a run's, an effect's, an expiry answer's) in clear. */
const TEXT_IN_CLEAR = (column: string) =>
  sql.raw(`${column} IS NOT NULL AND ${column} NOT LIKE '${SEALED_TEXT}%'`);

/** A customer account in clear (`c`): its email (an erased customer's holds a placeholder: left as it is). */
const ACCOUNT_IN_CLEAR = sql.raw(`c.email NOT LIKE '${SEALED_TEXT}%' AND c.email <> '${ERASED_EMAIL}'`);

/** A thread's (`t`) ticket in clear (title, message and fields are sealed together). */
const TICKET_IN_CLEAR = sql.raw(`t.customer_message NOT LIKE '${SEALED_TEXT}%'`);

/** A thread (`t`) still in clear: no subject yet, or values not sealed (an erased subject's are left as erasure left them). */
const IN_CLEAR = sql`(t.subject_id IS NULL
  OR (NOT EXISTS (SELECT 1 FROM vault.erased_subjects e WHERE e.subject_id = t.subject_id)
    AND (${TICKET_IN_CLEAR}
      OR EXISTS (SELECT 1 FROM checkpoint.checkpoint_blobs b WHERE b.thread_id = t.id AND ${UNSEALED("b")})
      OR EXISTS (SELECT 1 FROM checkpoint.checkpoint_writes w WHERE w.thread_id = t.id AND ${UNSEALED("w")})
      OR EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND ${INPUT_IN_CLEAR("r")})
      OR EXISTS (SELECT 1 FROM queued_inputs q WHERE q.thread_id = t.id AND ${INPUT_IN_CLEAR("q")})
      OR EXISTS (SELECT 1 FROM effects f WHERE f.thread_id = t.id AND ${EFFECT_IN_CLEAR("f")})
      OR EXISTS (SELECT 1 FROM outbox o WHERE o.thread_id = t.id AND ${EMAIL_IN_CLEAR("o")})
      OR EXISTS (SELECT 1 FROM account_changes a WHERE a.thread_id = t.id AND ${CHANGE_IN_CLEAR("a")})
      OR EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id AND ${TEXT_IN_CLEAR("r.error_message")})
      OR EXISTS (SELECT 1 FROM effects f WHERE f.thread_id = t.id AND ${TEXT_IN_CLEAR("f.last_error")})
      OR EXISTS (SELECT 1 FROM decisions d WHERE d.thread_id = t.id AND ${TEXT_IN_CLEAR("d.expiry_error")})
      OR EXISTS (SELECT 1 FROM notifications n WHERE n.payload ->> 'threadId' = t.id AND ${NOTICE_IN_CLEAR("n")})
      OR EXISTS (SELECT 1 FROM events v WHERE v.thread_id = t.id AND v.event ->> '$sealed' IS NULL)
      OR EXISTS (SELECT 1 FROM decisions d WHERE d.thread_id = t.id AND ${DECISION_IN_CLEAR("d")}))))`;

/** An order (`o`) whose customer is in clear (an erased customer's order holds placeholders: left as it is). */
const ORDER_IN_CLEAR = sql.raw(
  `o.customer_email NOT LIKE '${SEALED_TEXT}%' AND o.customer_email <> '${ERASED_EMAIL}'`,
);

/**
 * Seal up to `batch` orders in clear under their customer's key (made on first sight), with their names' blind index,
 * as `insertOrdersIfMissing` writes them; one transaction. Returns how many were sealed.
 */
async function sealOrders(db: Database["db"], batch: number): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = rowsOf<{ id: string; name: string; email: string }>(
      await tx.execute(sql`SELECT id, customer_name AS name, customer_email AS email FROM orders o
        WHERE ${ORDER_IN_CLEAR} ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED`),
    );
    for (const order of rows) {
      const subjectId = customerSubjectId(order.email);
      const sealer = keySealer({ subjectId, key: await ensureSubjectKey(tx, subjectId) });
      await tx.execute(sql`UPDATE orders SET customer_name = ${sealer.text(order.name)},
          customer_email = ${sealer.text(order.email)}, subject_id = ${subjectId}
        WHERE id = ${order.id}`);
      await tx.execute(sql`INSERT INTO order_names (order_id, terms)
        VALUES (${order.id}, ${sql.param(ticketTerms(order.name))}::text[])
        ON CONFLICT (order_id) DO UPDATE SET terms = excluded.terms`);
    }
    return rows.length;
  });
}

/**
 * Seal up to `batch` customer accounts in clear under their customer's key, as `applyAccountChange` writes them. An
 * account is its customer's by the email it was first known by (its id is that email's digest): after a change of
 * its email, that is the email of the changes made to it, not the one it holds now.
 */
async function sealAccounts(db: Database["db"], batch: number): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = rowsOf<{ id: string; email: string; address: string | null; payout: string | null }>(
      await tx.execute(sql`SELECT id, email, address, payout FROM customer_accounts c
        WHERE ${ACCOUNT_IN_CLEAR} ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED`),
    );
    if (rows.length === 0) return 0;
    const known = new Map<string, string>();
    const changed = rowsOf<{ thread_id: string; email: string }>(
      await tx.execute(sql`SELECT DISTINCT thread_id, account_email AS email FROM account_changes`),
    );
    for (const c of changed) {
      const email = await openThreadText(tx, c.thread_id, c.email);
      known.set(accountIdOf(email), email);
    }
    for (const account of rows) {
      const subjectId = customerSubjectId(known.get(account.id) ?? account.email);
      const sealer = keySealer({ subjectId, key: await ensureSubjectKey(tx, subjectId) });
      await tx.execute(sql`UPDATE customer_accounts SET email = ${sealer.text(account.email)},
          address = ${sealer.text(account.address)}, payout = ${sealer.text(account.payout)}, subject_id = ${subjectId}
        WHERE id = ${account.id}`);
    }
    return rows.length;
  });
}

/** One pass over up to `batch` threads still in clear. Run it until `remaining` is 0 (or only busy threads are left). */
export async function sealExistingThreads(database: Database, batch = 50): Promise<SealProgress> {
  const { db } = database;
  if (!(await sealingAllowed(database.sql, "sealed-records"))) {
    throw new AppError(
      "conflict:sealing_waits",
      "An instance of a release that cannot read sealed values is still serving: seal once the rollout is over.",
    );
  }
  // A server keeps its answer to "may I seal?" for 5 s (lib/db/vault.ts): until that long after the last instance of
  // the release before stopped, a server may still write in clear what this pass has just sealed around. Wait it out.
  const [recent] = rowsOf<{ wait_ms: number | null }>(
    await db.execute(sql`SELECT (extract(epoch FROM max(coalesce(stopped_at, seen_at)) + interval '6 seconds' - now())
        * 1000)::int AS wait_ms
      FROM instances WHERE NOT ('sealed-records' = ANY(coalesce(reads, '{}'::text[])))`),
  );
  const waitMs = Math.min(recent?.wait_ms ?? 0, 6_000);
  if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
  const progress: SealProgress = { subjects: 0, threads: 0, values: 0, busy: 0, remaining: 0 };
  progress.values += await sealOrders(db, batch);
  progress.values += await sealAccounts(db, batch);
  const candidates = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT t.id FROM threads t WHERE ${IN_CLEAR}
      ORDER BY t.id LIMIT ${batch}`),
  ).map((r) => r.id);
  for (const threadId of candidates) {
    const outcome = await db.transaction(async (tx) => {
      const thread = await lockThread({ tx, threadId });
      if (!thread) return "gone" as const;
      if (await getActiveRun({ db: tx, threadId })) return "busy" as const;
      let subjectId = thread.subjectId;
      if (!subjectId) {
        const [order] = rowsOf<{ email: string; subject_id: string | null }>(
          await tx.execute(
            sql`SELECT customer_email AS email, subject_id FROM orders WHERE id = ${thread.customerOrder ?? ""}`,
          ),
        );
        subjectId =
          order?.subject_id ??
          (order && order.email !== ERASED_EMAIL && !order.email.startsWith(SEALED_TEXT)
            ? customerSubjectId(order.email)
            : threadSubjectId(threadId));
        await ensureSubjectKey(tx, subjectId);
        await tx.execute(sql`UPDATE threads SET subject_id = ${subjectId} WHERE id = ${threadId}`);
        progress.subjects += 1;
      }
      return subjectId;
    });
    if (outcome === "busy") {
      progress.busy += 1;
      continue;
    }
    if (outcome === "gone") continue;
    // Read afresh: this process may have known the thread without a subject a moment ago.
    const key = await threadKey(database.sql, threadId, { fresh: true });
    if (!key || "erased" in key) continue;
    const sealed = await db.transaction(async (tx) => {
      if (!(await lockThread({ tx, threadId }))) return 0;
      if (await getActiveRun({ db: tx, threadId })) return -1;
      let n = 0;
      const blobs = rowsOf<{ ns: string; channel: string; version: string; type: string; blob: Uint8Array }>(
        await tx.execute(sql`SELECT checkpoint_ns AS ns, channel, version, type, blob
          FROM checkpoint.checkpoint_blobs b WHERE thread_id = ${threadId} AND ${UNSEALED("b")} AND blob IS NOT NULL`),
      );
      for (const b of blobs) {
        const value = sealValue(key.key, key.subjectId, Buffer.from(b.blob));
        await tx.execute(sql`UPDATE checkpoint.checkpoint_blobs SET type = ${SEALED + b.type}, blob = ${value}
          WHERE thread_id = ${threadId} AND checkpoint_ns = ${b.ns} AND channel = ${b.channel}
            AND version = ${b.version} AND type = ${b.type}`);
        n += 1;
      }
      const writes = rowsOf<{
        ns: string;
        cp: string;
        task: string;
        idx: number;
        type: string;
        channel: string;
        path: string;
        blob: Uint8Array;
      }>(
        await tx.execute(sql`SELECT checkpoint_ns AS ns, checkpoint_id AS cp, task_id AS task, idx, type, channel,
            task_path AS path, blob
          FROM checkpoint.checkpoint_writes w WHERE thread_id = ${threadId} AND ${UNSEALED("w")} AND blob IS NOT NULL`),
      );
      for (const w of writes) {
        const value = sealValue(key.key, key.subjectId, Buffer.from(w.blob));
        // A tool task's message keeps its tool's name readable for the history (see sealedType).
        const tool: string | null | undefined =
          w.type === "json" && w.channel === "messages" && w.path.startsWith(PUSH_PREFIX)
            ? /"name":"([A-Za-z0-9_.:-]{1,128})"/.exec(Buffer.from(w.blob).toString("utf8"))?.[1]
            : null;
        await tx.execute(sql`UPDATE checkpoint.checkpoint_writes SET type = ${sealedType(w.type, tool)}, blob = ${value}
          WHERE thread_id = ${threadId} AND checkpoint_ns = ${w.ns} AND checkpoint_id = ${w.cp}
            AND task_id = ${w.task} AND idx = ${w.idx} AND type = ${w.type}`);
        n += 1;
      }
      // The thread's rows, sealed as the query functions seal them (lib/db/vault.ts); JSON read as the column's text.
      const sealer = keySealer(key);
      const sealText = (text: string) => sealer.text(text);
      const sealJson = (text: string) => JSON.stringify(sealer.json(JSON.parse(text) as unknown));
      for (const [table, column, inClear] of [
        ["runs", "input", INPUT_IN_CLEAR("x")],
        ["queued_inputs", "input", INPUT_IN_CLEAR("x")],
        ["effects", "payload", EFFECT_IN_CLEAR("x")],
      ] as const) {
        const rows = rowsOf<{ id: string; value: string }>(
          await tx.execute(sql`SELECT id, ${sql.identifier(column)}::text AS value FROM ${sql.identifier(table)} x
            WHERE thread_id = ${threadId} AND ${inClear}`),
        );
        for (const row of rows) {
          await tx.execute(sql`UPDATE ${sql.identifier(table)} SET ${sql.identifier(column)} = ${sealJson(row.value)}::jsonb
            WHERE id = ${row.id}`);
          n += 1;
        }
      }
      // The event log (lib/db/queries/events.ts seals the same way).
      const logged = rowsOf<{ seq: string; value: string }>(
        await tx.execute(sql`SELECT seq::text AS seq, event::text AS value FROM events
          WHERE thread_id = ${threadId} AND event ->> '$sealed' IS NULL`),
      );
      if (logged.length > 0) {
        await tx.execute(sql`UPDATE events e SET event = x.event
          FROM unnest(${sql.param(logged.map((l) => l.seq))}::bigint[],
            ${sql.param(logged.map((l) => sealJson(l.value)))}::jsonb[]) AS x(seq, event)
          WHERE e.thread_id = ${threadId} AND e.seq = x.seq`);
        n += logged.length;
      }
      // Decisions: the question (payload, title, customer's name) and the answer, as lib/db/queries/decisions.ts seals
      // them; a wait timer's duration is read first (migration 0042 did so for the rows it found).
      const asked = rowsOf<{
        id: string;
        action: string;
        payload: string;
        answer: string | null;
        title: string | null;
        customer_name: string | null;
      }>(
        await tx.execute(sql`SELECT interrupt_id AS id, action, payload::text AS payload, answer::text AS answer, title,
            customer_name FROM decisions x WHERE thread_id = ${threadId} AND ${DECISION_IN_CLEAR("x")}`),
      );
      const isSealedJsonText = (text: string | null) =>
        text === null || text === "null" || isSealedJson(JSON.parse(text));
      const sealedText = (text: string | null) =>
        text === null || text.startsWith(SEALED_TEXT) ? text : sealText(text);
      for (const d of asked) {
        await tx.execute(sql`UPDATE decisions SET
            payload = ${isSealedJsonText(d.payload) ? d.payload : sealJson(d.payload)}::jsonb,
            answer = ${isSealedJsonText(d.answer) ? d.answer : sealJson(d.answer as string)}::jsonb,
            title = ${sealedText(d.title)}, customer_name = ${sealedText(d.customer_name)},
            wait_ms = coalesce(wait_ms, ${waitMsOf(d.action, JSON.parse(d.payload))}::bigint)
          WHERE interrupt_id = ${d.id}`);
        n += 1;
      }
      // The ticket: title, message and fields, and its words as a blind index (as createThread writes them).
      const [ticket] = rowsOf<{ title: string; message: string; fields: string | null }>(
        await tx.execute(sql`SELECT title, customer_message AS message, ticket::text AS fields FROM threads t
          WHERE id = ${threadId} AND ${TICKET_IN_CLEAR}`),
      );
      if (ticket) {
        await tx.execute(sql`UPDATE threads SET title = ${sealText(ticket.title)},
            customer_message = ${sealText(ticket.message)},
            ticket = ${ticket.fields === null ? null : sealJson(ticket.fields)}::jsonb
          WHERE id = ${threadId}`);
        await tx.execute(sql`INSERT INTO thread_search (thread_id, terms)
          VALUES (${threadId}, ${sql.param(ticketTerms(ticket.title, ticket.message))}::text[])
          ON CONFLICT (thread_id) DO UPDATE SET terms = excluded.terms`);
        n += 1;
      }
      // Account changes: the account's email, the customer's name and the values (lib/shop/accounts.ts).
      const changes = rowsOf<{ id: string; email: string; name: string; from: string | null; to: string }>(
        await tx.execute(sql`SELECT id, account_email AS email, customer_name AS name, from_value AS from,
            to_value AS to FROM account_changes x WHERE thread_id = ${threadId} AND ${CHANGE_IN_CLEAR("x")}`),
      );
      for (const c of changes) {
        await tx.execute(sql`UPDATE account_changes SET account_email = ${sealText(c.email)},
            customer_name = ${sealText(c.name)}, from_value = ${c.from === null ? null : sealText(c.from)},
            to_value = ${sealText(c.to)}
          WHERE id = ${c.id}`);
        n += 1;
      }
      // Notifications about the thread: what they say, beside their event and thread (notifications.ts).
      const notices = rowsOf<{ id: string; payload: Record<string, unknown> }>(
        await tx.execute(sql`SELECT id, payload FROM notifications x
          WHERE payload ->> 'threadId' = ${threadId} AND ${NOTICE_IN_CLEAR("x")}`),
      );
      for (const notice of notices) {
        const { event, ...said } = notice.payload;
        const payload = { event, threadId, sealed: sealer.json(said) };
        await tx.execute(
          sql`UPDATE notifications SET payload = ${JSON.stringify(payload)}::jsonb WHERE id = ${notice.id}`,
        );
        n += 1;
      }
      // Error texts: a run's, an effect's, an expiry answer's (runs.ts, effects.ts, deadlines.ts seal them so).
      for (const [table, key, column] of [
        ["runs", "id", "error_message"],
        ["effects", "id", "last_error"],
        ["decisions", "interrupt_id", "expiry_error"],
      ] as const) {
        const errors = rowsOf<{ id: string; text: string }>(
          await tx.execute(sql`SELECT ${sql.identifier(key)} AS id, ${sql.identifier(column)} AS text
            FROM ${sql.identifier(table)} x WHERE thread_id = ${threadId} AND ${TEXT_IN_CLEAR(`x.${column}`)}`),
        );
        for (const e of errors) {
          await tx.execute(sql`UPDATE ${sql.identifier(table)} SET ${sql.identifier(column)} = ${sealText(e.text)}
            WHERE ${sql.identifier(key)} = ${e.id}`);
          n += 1;
        }
      }
      // Outbox emails: address, subject and body, as sealThreadText seals them.
      const emails = rowsOf<{ id: string; to_address: string; subject: string; body: string }>(
        await tx.execute(sql`SELECT id, to_address, subject, body FROM outbox x
          WHERE thread_id = ${threadId} AND ${EMAIL_IN_CLEAR("x")}`),
      );
      for (const e of emails) {
        await tx.execute(sql`UPDATE outbox SET to_address = ${sealText(e.to_address)}, subject = ${sealText(e.subject)},
            body = ${sealText(e.body)}
          WHERE id = ${e.id}`);
        n += 1;
      }
      return n;
    });
    if (sealed < 0) progress.busy += 1;
    else if (sealed > 0) {
      progress.threads += 1;
      progress.values += sealed;
    }
  }
  const [left] = rowsOf<{ n: number }>(
    await db.execute(sql`SELECT (SELECT count(*)::int FROM threads t WHERE ${IN_CLEAR})
      + (SELECT count(*)::int FROM orders o WHERE ${ORDER_IN_CLEAR})
      + (SELECT count(*)::int FROM customer_accounts c WHERE ${ACCOUNT_IN_CLEAR}) AS n`),
  );
  progress.remaining = left?.n ?? 0;
  if (progress.subjects + progress.values > 0) {
    await recordAudit({
      db,
      entries: [
        {
          action: "data_sealed",
          actor: { id: "system:keys", label: "keys seal", role: null },
          detail: { ...progress },
        },
      ],
    });
  }
  return progress;
}
