/*
 * Where a customer's personal data can be, column by column: every text, JSON, byte and array column of the database
 * is declared personal (erased in the subject's own rows, lib/runtime/retention/erasure.ts) or not personal (with why).
 * lib/db/queries/erasure.int.test.ts checks the migrated database against both lists, so a new column is classified
 * when it is added.
 */

/** How a table's rows are found to be the subject's. */
export type SubjectScope =
  /** Rows of the subject's threads: the column names the thread. */
  | { by: "thread"; column: string }
  /** Rows about the customer's email address (lower case) in `column`. */
  | { by: "email"; column: string }
  /** The customer's account: its email, or its id derived from the email. */
  | { by: "account" }
  /** Rows of the subject's threads, or about their email (account changes). */
  | { by: "thread_or_email"; column: string; emailColumn: string }
  /** Rows whose JSON `column` names one of the subject's threads under `threadId`. */
  | { by: "json_thread"; column: string };

/** A column that can hold a customer's personal data, and how erasure reads it. */
export interface PersonalColumn {
  column: string;
  /** `text`: replaced as text; `jsonb`: string values only; `blob`: the saver's bytes, JSON when the row's type says so. */
  kind: "text" | "jsonb" | "blob";
}

/** A table with personal columns. */
export interface PersonalTable {
  schema: "public" | "checkpoint";
  table: string;
  scope: SubjectScope;
  columns: readonly PersonalColumn[];
}

const text = (column: string): PersonalColumn => ({ column, kind: "text" });
const json = (column: string): PersonalColumn => ({ column, kind: "jsonb" });
const blob = (column: string): PersonalColumn => ({ column, kind: "blob" });
const ofThread = (column = "thread_id"): SubjectScope => ({ by: "thread", column });

/**
 * Where a customer's personal data can be: every column of every table is either here or in
 * {@link NOT_PERSONAL_COLUMNS} (a test checks the database against both, so a new column is classified when added).
 */
export const PERSONAL_COLUMNS: readonly PersonalTable[] = [
  {
    schema: "public",
    table: "threads",
    scope: ofThread("id"),
    columns: [text("title"), text("customer_message"), json("ticket")],
  },
  { schema: "public", table: "runs", scope: ofThread(), columns: [json("input"), text("error_message")] },
  { schema: "public", table: "queued_inputs", scope: ofThread(), columns: [json("input")] },
  {
    schema: "public",
    table: "decisions",
    scope: ofThread(),
    columns: [json("payload"), text("title"), text("customer_name"), json("answer"), text("expiry_error")],
  },
  { schema: "public", table: "events", scope: ofThread(), columns: [json("event")] },
  { schema: "public", table: "effects", scope: ofThread(), columns: [json("payload"), text("last_error")] },
  {
    schema: "public",
    table: "outbox",
    scope: ofThread(),
    columns: [text("to_address"), text("subject"), text("body")],
  },
  {
    schema: "public",
    table: "account_changes",
    scope: { by: "thread_or_email", column: "thread_id", emailColumn: "account_email" },
    columns: [text("account_email"), text("customer_name"), text("from_value"), text("to_value")],
  },
  {
    schema: "public",
    table: "orders",
    scope: { by: "email", column: "customer_email" },
    columns: [text("customer_name"), text("customer_email")],
  },
  {
    schema: "public",
    table: "customer_accounts",
    scope: { by: "account" },
    columns: [text("email"), text("address"), text("payout")],
  },
  {
    schema: "public",
    table: "notifications",
    scope: { by: "json_thread", column: "payload" },
    columns: [json("payload"), text("last_error")],
  },
  { schema: "checkpoint", table: "checkpoint_blobs", scope: ofThread(), columns: [blob("blob")] },
  { schema: "checkpoint", table: "checkpoint_writes", scope: ofThread(), columns: [blob("blob")] },
];

/**
 * Columns that hold no customer's personal data, by table (`schema.table` for the saver's), with why. The audit trail
 * is erased through its own function (payload, answer and detail of the subject's threads' rows; never the actor).
 */
export const NOT_PERSONAL_COLUMNS: Readonly<Record<string, { columns: readonly string[]; why: string }>> = {
  "public.threads": {
    columns: [
      "id",
      "agent_id",
      "agent_version",
      "order_ref",
      "context_order",
      "customer_order",
      "status",
      "created_by",
      "started_by",
      "last_edited_by",
      "search_tsv",
      "subject_id",
    ],
    why: "ids, the agent, order numbers, the status, staff principals, the opaque subject id (a keyed blind index); the search vector is generated from the text",
  },
  "public.runs": {
    columns: [
      "id",
      "thread_id",
      "kind",
      "status",
      "started_by",
      "started_by_label",
      "agent_key",
      "from_checkpoint_id",
      "owner",
      "error_code",
      "trace_id",
      "trace_span_id",
      "cancel_requested_by",
    ],
    why: "ids, statuses, codes and staff principals",
  },
  "public.queued_inputs": {
    columns: ["id", "thread_id", "strategy", "behind_run_id", "started_by", "started_by_label", "status"],
    why: "ids, statuses and staff principals",
  },
  "public.decisions": {
    columns: [
      "interrupt_id",
      "thread_id",
      "run_id",
      "checkpoint_id",
      "action",
      "order_id",
      "currency",
      "status",
      "resume_status",
      "resolved_by",
      "resolved_by_id",
      "resolver_role",
      "resume_run_id",
      "expiry_answer",
      "asked_in_build",
      "outcome",
      "findings",
    ],
    why: "the ledger: ids, the question kind, statuses, who decided (staff), the SLA's configured answer, the build that asked and the answer's outcome word (approve, reject, send…); the policy's findings (codes and its own words: a late request, a fraud flag, an amount over a limit — never a name or an address)",
  },
  "public.events": { columns: ["thread_id", "run_id", "type"], why: "ids and the event type" },
  "public.effects": {
    columns: [
      "id",
      "idempotency_key",
      "thread_id",
      "kind",
      "record_id",
      "status",
      "owner",
      "provider_ref",
      "resolution",
      "resolved_by",
      "trace_id",
      "trace_span_id",
      "receipt_id",
    ],
    why: "ids, keys, statuses, the provider's reference, the authorizing receipt and staff principals",
  },
  "public.outbox": { columns: ["id", "idempotency_key", "thread_id"], why: "ids and keys" },
  "public.account_changes": {
    columns: ["id", "idempotency_key", "thread_id", "field", "receipt_id"],
    why: "ids, keys, which field changed and the receipt that authorized it",
  },
  "public.orders": {
    columns: [
      "id",
      "currency",
      "payment_method",
      "items",
      "status",
      "payment_ref",
      "stripe_customer",
      "name_tsv",
      "subject_id",
    ],
    why: "the order's number, money, items and status; the provider's opaque references of its payment and customer (what the customer gave Stripe is Stripe's to erase); the name vector is generated from a name in clear; the opaque subject id (a keyed blind index of the email)",
  },
  "public.customer_accounts": {
    columns: ["id", "subject_id"],
    why: "a digest of the email (accountIdOf) and the opaque subject id (a keyed blind index of the email)",
  },
  "public.refunds": {
    columns: [
      "id",
      "idempotency_key",
      "order_id",
      "thread_id",
      "currency",
      "method",
      "approved_by",
      "receipt_id",
      "purpose",
    ],
    why: "the money ledger: ids, keys, the method, who approved (staff), the receipt and the purpose (ids)",
  },
  "public.decision_receipts": {
    columns: ["id", "thread_id", "interrupt_id", "body", "key_id", "signature"],
    why: "decision receipts: digests, ids, amounts and staff principals by design (they outlive erasure)",
  },
  "public.receipt_authorizations": {
    columns: ["receipt_id", "thread_id", "effect", "terms", "spent_by"],
    why: "what receipts authorize: order ids, amounts, an account id and keyed digests of values",
  },
  "public.vouchers": {
    columns: ["id", "idempotency_key", "code", "thread_id", "currency", "granted_by"],
    why: "ids, the voucher's code and who granted it (staff)",
  },
  "public.notifications": {
    columns: ["id", "idempotency_key", "target_id", "event", "status"],
    why: "ids and statuses",
  },
  "public.audit_log": {
    columns: [
      "action",
      "actor_id",
      "actor",
      "actor_role",
      "thread_id",
      "checkpoint_id",
      "interrupt_id",
      "ip_address",
      "payload",
      "answer",
      "detail",
    ],
    why: "who did what, when, on what (staff); payload, answer and detail of the subject's threads' rows are erased through audit_log_erase_rows",
  },
  "public.order_names": {
    columns: ["order_id", "terms"],
    why: "a sealed customer name's words as keyed digests (a blind index under the index key): erasure deletes the subject's orders' rows",
  },
  "public.thread_search": {
    columns: ["thread_id", "terms"],
    why: "a sealed ticket's words as keyed digests (a blind index under the index key, no words): erasure deletes the subject's threads' rows",
  },
  "public.audit_chain": { columns: ["content_hash", "row_hash"], why: "digests" },
  "public.audit_chain_state": { columns: ["head_hash", "candidate_running"], why: "the chainer's state" },
  "public.auth_users": { columns: ["id", "email", "name", "image", "role"], why: "staff accounts" },
  "public.auth_accounts": {
    columns: [
      "id",
      "account_id",
      "provider_id",
      "user_id",
      "access_token",
      "refresh_token",
      "id_token",
      "scope",
      "password",
    ],
    why: "staff credentials",
  },
  "public.auth_sessions": {
    columns: ["id", "token", "ip_address", "user_agent", "user_id"],
    why: "staff sessions",
  },
  "public.auth_verifications": { columns: ["id", "identifier", "value"], why: "staff sign-in" },
  "public.auth_rate_limits": { columns: ["id", "key"], why: "sign-in rate limits" },
  "public.api_keys": {
    columns: ["id", "name", "prefix", "key_hash", "scope", "created_by", "revoked_by"],
    why: "staff API keys",
  },
  "public.decision_claims": {
    columns: ["interrupt_id", "thread_id", "user_id", "user_label", "assigned_by"],
    why: "who works on a decision (staff)",
  },
  "public.inbox_changes": { columns: ["interrupt_id", "thread_id", "kind"], why: "ids" },
  "public.instances": {
    columns: ["id", "hostname", "boot_id", "pid_namespace", "reads"],
    why: "server processes and the storage formats they read",
  },
  "public.notification_targets": {
    columns: ["id", "kind", "target", "secret", "events"],
    why: "staff configuration",
  },
  "public.queue_samples": { columns: ["pending_by_action"], why: "counts" },
  "public.deploy_shadow_reports": {
    columns: ["id", "candidate", "baseline", "summary", "threads"],
    why: "a deploy shadow's verdicts: build directories, counts, thread ids, amounts and digests (an effect's words are kept only as a digest)",
  },
  "public.provider_events": {
    columns: ["id", "provider", "type", "object_id", "outcome"],
    why: "the payment provider's event ids and types, and what applying them did",
  },
  "public.provider_findings": {
    columns: [
      "id",
      "finding_key",
      "provider",
      "kind",
      "provider_ref",
      "effect_id",
      "thread_id",
      "order_id",
      "ledger",
      "provider_side",
      "run_id",
      "status",
      "resolved_by",
    ],
    why: "differences between the provider and the ledger: ids, amounts, currencies, statuses and the provider's reason codes (no name or address); who closed one (staff)",
  },
  "public.reconciliation_runs": {
    columns: ["id", "provider", "instance", "outcome", "error"],
    why: "server jobs: the provider compared with, the instance, the outcome and an error code",
  },
  "public.scheduled_jobs": {
    columns: ["name", "lease_holder", "last_holder", "last_error", "last_report"],
    why: "server jobs and their counts",
  },
  "public.sla_policies": {
    columns: ["id", "action", "expiry_answer", "updated_by"],
    why: "staff configuration",
  },
  "public.teams": { columns: ["id", "name", "created_by"], why: "staff configuration" },
  "public.team_agents": { columns: ["team_id", "agent_id"], why: "staff configuration" },
  "public.team_members": { columns: ["team_id", "user_id"], why: "staff configuration" },
  "public.config_proposals": {
    columns: ["id", "kind", "change", "proposed_by", "status", "decided_by", "outcome"],
    why: "staff configuration: a proposed change to a setting (limits by user and team ids), who proposed and who decided",
  },
  "public.authority_limits": {
    columns: ["id", "subject_kind", "subject_id", "agent_id", "action", "set_by"],
    why: "staff configuration: whose authority, over which agent and question kind, set by which admin",
  },
  "public.thread_followers": { columns: ["thread_id", "instance_id"], why: "server processes" },
  "checkpoint.checkpoints": {
    columns: [
      "thread_id",
      "checkpoint_ns",
      "checkpoint_id",
      "parent_checkpoint_id",
      "checkpoint",
      "metadata",
    ],
    why: "the checkpoint's structure (its values are blobs) and the engine's bookkeeping (step, source, run id, parents, the agent version: no value of the state, lib/db/vault.int.test.ts checks): never rewritten",
  },
  "checkpoint.checkpoint_blobs": {
    columns: ["thread_id", "checkpoint_ns", "channel", "version", "type"],
    why: "the saver's keys",
  },
  "vault.subject_keys": {
    columns: ["subject_id", "master_key_id", "wrapped"],
    why: "the subjects' keys, wrapped by the master key: erasure deletes the subject's row",
  },
  "vault.erased_subjects": { columns: ["subject_id", "erasure_id"], why: "opaque subject ids" },
  "checkpoint.checkpoint_writes": {
    columns: ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "channel", "type"],
    why: "the saver's keys",
  },
};
