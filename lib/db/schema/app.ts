import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import {
  DECISION_STATUSES,
  type DecisionFinding,
  EFFECT_STATUSES,
  EFFECT_TASK_ACTIONS,
  MULTITASK_STRATEGIES,
  QUEUED_INPUT_STATUSES,
  RESUME_STATUSES,
  RUN_KINDS,
  RUN_STATUSES,
  THREAD_STATUSES,
} from "../../contract/wire";
import { byteText } from "./columns";

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

/**
 * A ticket's conversation. `status` mirrors the latest run for the console; the truth about the graph is in the
 * checkpoints. `last_seq` is the last event sequence number written for the thread.
 *
 * `updated_at` moves when the thread changes (its status, its ticket, an edit, an input queued), not with each event
 * batch a run writes: an append moves `last_seq` alone, a column no index holds, so Postgres updates the row in place
 * (a heap-only tuple) rather than writing a new entry into each of the six indexes (the search index among them).
 */
export const threads = pgTable(
  "threads",
  {
    id: text("id").primaryKey(),
    /** The registered agent (`AgentDefinition.id`) whose graph runs this thread. */
    agentId: text("agent_id").notNull().default("refund"),
    /** The agent version the thread runs under (pinned until it ends, unless a migration moves it). */
    agentVersion: text("agent_version").notNull().default("1"),
    title: text("title").notNull(),
    customerMessage: text("customer_message").notNull(),
    orderRef: text("order_ref"),
    /**
     * The ticket's fields as its agent's intake schema read them (`AgentDefinition.intake`, lib/runtime/runs/intake.ts);
     * null for threads filed before tickets were the agent's own (a message and an optional order number).
     */
    ticket: jsonb("ticket"),
    /**
     * The order the agent found the thread to be about, when the ticket was filed without one (an operator typed it,
     * the agent looked it up): set when a run ends (`finalizeRun`, from the agent's `context`). Kept apart from
     * `order_ref`, which says what the ticket system knew (the refund agent's identity check reads that).
     */
    contextOrder: text("context_order"),
    /** The order the thread is about, as filed or as found: what search and the customer of a hit go by. */
    customerOrder: text("customer_order").generatedAlwaysAs(sql`coalesce(order_ref, context_order)`),
    /**
     * The data subject whose key seals the thread's personal data (its checkpoints and writes): the customer of the
     * ticket's order (a blind index of their email), or `t_<id>`, a subject of the thread's own when the ticket named
     * no known order. Null: a thread filed before personal data was kept under keys (plaintext until migrated).
     */
    subjectId: text("subject_id"),
    status: text("status", { enum: THREAD_STATUSES }).notNull().default("idle"),
    lastSeq: bigint("last_seq", { mode: "number" }).notNull().default(0),
    /** Retention compacted the event log up to this seq (finished runs only): a reconnect from before it gets a
     * snapshot instead of the events (see lib/runtime/compaction.ts). 0 = nothing compacted. */
    eventsCompactedSeq: bigint("events_compacted_seq", { mode: "number" }).notNull().default(0),
    /** Principals (user id or `key:<id>`) who filed the ticket, started its first run, and last edited its state
     * (a fork with edits). Four-eyes: none of them may approve its refund. */
    createdBy: text("created_by"),
    startedBy: text("started_by"),
    lastEditedBy: text("last_edited_by"),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Erasure finds a subject's threads by their subject.
    index("threads_subject_idx").on(t.subjectId),
    // The console lists threads newest first, optionally by status (`listInbox` for non-pending statuses).
    index("threads_updated_idx").on(t.updatedAt, t.id),
    index("threads_status_updated_idx").on(t.status, t.updatedAt, t.id),
    // Search by order number.
    index("threads_order_ref_idx").on(t.orderRef),
    // Search by order number, customer email or name: the order as filed or as found.
    index("threads_customer_order_idx").on(t.customerOrder),
  ],
);

/**
 * The words of a sealed thread's ticket (title and message) as a blind index (lib/db/search-terms.ts): keyed digests
 * of each word's prefixes, under the index key, never the words. Search matches a sealed ticket's words here (a
 * ticket in clear through `threads.search_tsv`); erasure deletes the subject's rows, so nothing of their words is left
 * to match. One row per sealed thread, apart from `threads` so a thread's reads never carry its digests.
 */
export const threadSearch = pgTable(
  "thread_search",
  {
    threadId: text("thread_id")
      .primaryKey()
      .references(() => threads.id, { onDelete: "cascade" }),
    terms: text("terms").array().notNull(),
  },
  (t) => [index("thread_search_terms_idx").using("gin", t.terms).with({ fastupdate: false })],
);

/**
 * Runs of a thread. At most one active (queued/running) run per thread: the partial unique index makes a second
 * concurrent start fail in the database, whichever process tries.
 */
export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: RUN_KINDS }).notNull(),
    status: text("status", { enum: RUN_STATUSES }).notNull(),
    /** What the graph is invoked with: the new input, or the resume map. */
    input: jsonb("input"),
    /** The principal who started the run (user id, `key:<id>`, `system:<name>`) and its label (email, key name).
     * Four-eyes: whoever started a run since the thread's previous decision supplied input to what it asks next. */
    startedBy: text("started_by"),
    startedByLabel: text("started_by_label"),
    /** A fork run that edited state before running: its starter is an editor of the thread for good. */
    editedState: boolean("edited_state").notNull().default(false),
    /** `agent@version` the run executes: an instance claims only runs of versions it has (rolling upgrades). */
    agentKey: text("agent_key").notNull().default("refund@1"),
    /** Checkpoint the run starts from (forks, time travel); null = the thread's head. */
    fromCheckpointId: byteText("from_checkpoint_id"),
    /** Process that executes the run, and until when its claim holds. */
    owner: text("owner"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
    attempts: integer("attempts").notNull().default(0),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    createdAt: createdAt(),
    startedAt: timestamp("started_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    /** OpenTelemetry trace of the run (32 hex) and its root span (16 hex): log lines and exported spans carry them. */
    traceId: text("trace_id"),
    traceSpanId: text("trace_span_id"),
    /**
     * An operator asked to stop the run (POST …/runs/{id}/cancel): who (their label) and when. The instance executing
     * it aborts the graph and ends the run as `cancelled`; nobody's lease heartbeat renews a run asked to stop.
     */
    cancelRequestedBy: text("cancel_requested_by"),
    cancelRequestedAt: timestamp("cancel_requested_at", { withTimezone: true }),
    /**
     * Model tokens the run spent (prompt and completion, as the provider reported them; the offline models estimate),
     * written when its execution ends however it ends: what the per-thread budget adds up.
     */
    tokensIn: integer("tokens_in").notNull().default(0),
    tokensOut: integer("tokens_out").notNull().default(0),
  },
  (t) => [
    uniqueIndex("runs_one_active_per_thread").on(t.threadId).where(sql`${t.status} in ('queued', 'running')`),
    // Thread page: a thread's runs, newest first.
    index("runs_thread_idx").on(t.threadId, t.createdAt),
    // The recovery sweeper (`claimExpiredRun`): active runs by lease expiry.
    index("runs_active_lease_idx").on(t.leaseExpiresAt).where(sql`${t.status} in ('queued', 'running')`),
    // The operations page: the latest failed runs.
    index("runs_failed_idx").on(t.finishedAt).where(sql`${t.status} = 'failed'`),
  ],
);

/**
 * New input that arrived while a run of its thread was active, under an agent whose strategy is `enqueue`, `interrupt`
 * or `rollback` (lib/runtime/runs/queued-inputs.ts). Durable: a restart or a deploy loses none. Started in `position` order,
 * one at a time, as a run whose id is this row's id (the id the sender chose), when the thread holds no active run
 * and waits for no decision.
 */
export const queuedInputs = pgTable(
  "queued_inputs",
  {
    /** The run id it will start as: the sender's `runId`. */
    id: text("id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    /** Arrival order across the thread's queue. */
    position: bigint("position", { mode: "number" }).generatedAlwaysAsIdentity().notNull(),
    /** The run input (`RunInput` of kind `input`). */
    input: jsonb("input").notNull(),
    strategy: text("strategy", { enum: MULTITASK_STRATEGIES }).notNull(),
    /** The run that was active when it arrived (stopped, under `interrupt` / `rollback`). */
    behindRunId: text("behind_run_id"),
    startedBy: text("started_by").notNull(),
    startedByLabel: text("started_by_label"),
    status: text("status", { enum: QUEUED_INPUT_STATUSES }).notNull().default("waiting"),
    createdAt: createdAt(),
    startedAt: timestamp("started_at", { withTimezone: true }),
  },
  (t) => [index("queued_inputs_waiting_idx").on(t.threadId, t.position).where(sql`${t.status} = 'waiting'`)],
);

/**
 * The decision ledger: one row per interrupt LangGraph raised. A decision moves `pending → resolved` by
 * compare-and-set in the transaction that creates the resume run, so two operators can never both decide.
 * Never deleted: it is the audit trail (it stays when retention archives the thread).
 */
export const decisions = pgTable(
  "decisions",
  {
    /** LangGraph's interrupt id, also the AG-UI interrupt id. */
    interruptId: text("interrupt_id").primaryKey(),
    /** No foreign key: the ledger outlives its thread when retention archives and deletes the thread. */
    threadId: text("thread_id").notNull(),
    /** Run that raised the interrupt. */
    runId: text("run_id").notNull(),
    /** Checkpoint the graph paused at. */
    checkpointId: byteText("checkpoint_id").notNull(),
    action: text("action").notNull(),
    payload: jsonb("payload").notNull(),
    /**
     * The production build whose code asked it (Next's build id), or null when not known (a development server, a
     * script). A resume answered under the same build is asked by the same code: the runtime's replay of the paused
     * step (lib/runtime/runs/asked-again.ts) is only needed for questions another build asked.
     */
    askedInBuild: text("asked_in_build"),
    /**
     * A wait timer's duration (`wait_timer` questions), copied from the payload when recorded: the deadline trigger
     * reads it, as the payload is sealed (lib/db/queries/decisions.ts).
     */
    waitMs: bigint("wait_ms", { mode: "number" }),
    /** Copied from the payload when recorded, so the inbox filters and sorts without reading JSON. */
    title: text("title"),
    orderId: text("order_id"),
    customerName: text("customer_name"),
    amountCents: integer("amount_cents"),
    currency: text("currency"),
    /** The policy's findings the question shows (codes and the policy's words, no personal data): the inbox row's. */
    findings: jsonb("findings").$type<DecisionFinding[]>(),
    /** pending | answered (taken, waiting for the other decisions of its super-step) | resolved | superseded */
    status: text("status", { enum: DECISION_STATUSES }).notNull().default("pending"),
    /** AG-UI resume status. */
    resumeStatus: text("resume_status", { enum: RESUME_STATUSES }),
    answer: jsonb("answer"),
    /**
     * The answer as a word (its `decision` or `choice`, `cancelled`, or `answered`), set when it is taken: the metrics
     * count outcomes without opening the answer, which is sealed.
     */
    outcome: text("outcome"),
    resolvedBy: text("resolved_by"),
    /** The resolver's user id and role when they decided (four-eyes is checked against these). */
    resolvedById: text("resolved_by_id"),
    resolverRole: text("resolver_role"),
    resolvedAt: timestamp("resolved_at", { withTimezone: true }),
    resumeRunId: text("resume_run_id"),
    /** When the decision is due: set from `sla_policies` when recorded, by a trigger (default policy `*`: 1 day). */
    dueAt: timestamp("due_at", { withTimezone: true }).notNull().default(sql`now() + interval '1 day'`),
    /** When it was escalated for being overdue (set once, by compare-and-set: an item escalates exactly once). */
    escalatedAt: timestamp("escalated_at", { withTimezone: true }),
    /** What the runtime answers on its own once overdue (`system:expiry`), copied from the policy; null = none. */
    expiryAnswer: jsonb("expiry_answer").$type<{ status: "resolved" | "cancelled"; payload?: unknown }>(),
    /** Why the expiry answer could not be applied (refused by the contract or the policy): it is not tried again. */
    expiryError: text("expiry_error"),
    createdAt: createdAt(),
  },
  (t) => [
    // The inbox sorted by time left: pending decisions with a deadline, soonest first.
    index("decisions_pending_due_idx").on(t.dueAt, t.interruptId).where(sql`${t.status} = 'pending'`),
    // The supervisors' view: escalated pending decisions by time left.
    index("decisions_escalated_due_idx")
      .on(t.dueAt, t.interruptId)
      .where(sql`${t.status} = 'pending' AND ${t.escalatedAt} IS NOT NULL`),
    // Search by order number.
    index("decisions_order_idx").on(t.orderId),
    // Resume validation and the thread page: a thread's decisions by status.
    index("decisions_thread_status_idx").on(t.threadId, t.status),
    // The inbox (`listInbox`): pending decisions oldest first, keyset-paged on (created_at, interrupt_id)…
    index("decisions_pending_idx").on(t.createdAt, t.interruptId).where(sql`${t.status} = 'pending'`),
    // …and the inbox by time left filtered by action.
    index("decisions_pending_action_idx")
      .on(t.action, t.dueAt, t.interruptId)
      .where(sql`${t.status} = 'pending'`),
    // The operations page: decisions per hour of the last day.
    index("decisions_resolved_at_idx").on(t.resolvedAt).where(sql`${t.resolvedAt} is not null`),
  ],
);

/** Durable AG-UI event log: every event a run emitted, in per-thread sequence order, for reconnects. */
export const events = pgTable(
  "events",
  {
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    seq: bigint("seq", { mode: "number" }).notNull(),
    runId: text("run_id").notNull(),
    type: text("type").notNull(),
    event: jsonb("event").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.seq] })],
);

/**
 * Outgoing email. Idempotent by key: one email per approved draft revision (`email:<decision ref>`), so a re-run finds
 * its own email and an edited reply on a reopened ticket is a new one. Delivered by the `effects` row of the same key.
 */
export const outbox = pgTable("outbox", {
  id: text("id").primaryKey(),
  idempotencyKey: text("idempotency_key").notNull().unique(),
  threadId: text("thread_id").notNull(),
  toAddress: text("to_address").notNull(),
  subject: text("subject").notNull(),
  body: text("body").notNull(),
  createdAt: createdAt(),
});

/**
 * The effect outbox: every side effect that leaves the process (a payment, an email), recorded in the transaction
 * that records its business row (same idempotency key), and delivered afterwards by a dispatcher (`lib/effects`)
 * that claims due rows with `FOR UPDATE SKIP LOCKED`, retries with back-off, and survives restarts (a `sending` row
 * whose lease ran out is claimed again and reconciled with the provider first). Never deleted: it is the audit trail.
 */
export const effects = pgTable(
  "effects",
  {
    id: text("id").primaryKey(),
    /** Derived from the authorizing decision; sent to the provider as its Idempotency-Key. */
    idempotencyKey: text("idempotency_key").notNull().unique(),
    threadId: text("thread_id").notNull(),
    /** The connector that delivers it: `payment` | `email`. */
    kind: text("kind").notNull(),
    /** The business row it delivers (a `refunds` or `outbox` id). */
    recordId: text("record_id").notNull(),
    /** What the connector sends. */
    payload: jsonb("payload").notNull(),
    status: text("status", { enum: EFFECT_STATUSES }).notNull().default("queued"),
    /** Delivery attempts started (a claim counts one, so a crash mid-send counts too). */
    attempts: integer("attempts").notNull().default(0),
    /** When a queued effect is due (back-off after a failed attempt). */
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    /** The dispatcher sending it, and until when its claim holds. */
    owner: text("owner"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
    lastError: text("last_error"),
    /** The provider's id for it (payment id, SMTP message id). */
    providerRef: text("provider_ref"),
    /**
     * For a kind that moves money or changes an account: the decision receipt that authorizes it. The dispatcher
     * delivers it only when the receipt's signature verifies and its authorization matches the payload.
     */
    receiptId: text("receipt_id"),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
    /** The operator task of a failed effect: what was done about it, by whom, when. */
    resolution: text("resolution", { enum: EFFECT_TASK_ACTIONS }),
    resolvedBy: text("resolved_by"),
    resolvedAt: timestamp("resolved_at", { withTimezone: true }),
    /**
     * The trace of the run that recorded it (its run span's ids, as on the run row): each delivery attempt's span
     * joins that trace without reading the run. Null outside a traced run.
     */
    traceId: text("trace_id"),
    traceSpanId: text("trace_span_id"),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // The dispatcher: due queued effects, and sending ones whose claim may have expired.
    index("effects_due_idx").on(t.nextAttemptAt).where(sql`${t.status} in ('queued', 'sending')`),
    // The thread page: a thread's effects in order.
    index("effects_thread_idx").on(t.threadId, t.createdAt),
    // The provider's webhooks and the reconciliation: an effect by the provider's id for it.
    index("effects_provider_ref_idx").on(t.providerRef).where(sql`${t.providerRef} IS NOT NULL`),
  ],
);

/**
 * Decision receipts: for every decision (and every automatic approval), a canonical body saying what the decider was
 * shown (a digest of the exact payload: question, tool and arguments, amounts, destination, policy findings), what
 * they answered, who, when, through which channel and under which policy version, and which effects it authorizes —
 * signed with a server key (HMAC-SHA256, `key_id` names it; lib/platform/receipt-keys.ts). No personal data: digests, ids and
 * amounts only, so receipts outlive retention and erasure. Never updated or deleted.
 */
export const decisionReceipts = pgTable(
  "decision_receipts",
  {
    /** The decision's interrupt id, or `system:<ref>` for an automatic approval. */
    id: text("id").primaryKey(),
    threadId: text("thread_id").notNull(),
    interruptId: text("interrupt_id"),
    /** The signed body (canonical JSON of it is what the signature covers). */
    body: jsonb("body").notNull(),
    keyId: text("key_id").notNull(),
    signature: text("signature").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("decision_receipts_thread_idx").on(t.threadId, t.createdAt)],
);

/**
 * What each receipt authorizes, one row per effect (a refund of an amount to an order, a change of an account's field
 * to a value's digest, a voucher), spent once by the effect that uses it (`spent_by`: the effect's idempotency key; a
 * re-run of the same effect finds its own).
 */
export const receiptAuthorizations = pgTable(
  "receipt_authorizations",
  {
    receiptId: text("receipt_id").notNull(),
    idx: integer("idx").notNull(),
    threadId: text("thread_id").notNull(),
    /** `refund` | `account_change` | `voucher` */
    effect: text("effect").notNull(),
    terms: jsonb("terms").notNull(),
    spentBy: text("spent_by"),
    spentAt: timestamp("spent_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.receiptId, t.idx] }),
    index("receipt_authorizations_thread_idx").on(t.threadId, t.effect),
    uniqueIndex("receipt_authorizations_spent_idx").on(t.spentBy).where(sql`${t.spentBy} IS NOT NULL`),
  ],
);

export type Thread = typeof threads.$inferSelect;
export type Run = typeof runs.$inferSelect;
export type QueuedInput = typeof queuedInputs.$inferSelect;
export type Decision = typeof decisions.$inferSelect;
export type EventRow = typeof events.$inferSelect;
export type OutboxEmail = typeof outbox.$inferSelect;
export type Effect = typeof effects.$inferSelect;
export type DecisionReceipt = typeof decisionReceipts.$inferSelect;
export type ReceiptAuthorization = typeof receiptAuthorizations.$inferSelect;
