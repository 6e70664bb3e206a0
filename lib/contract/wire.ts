/*
 * The wire contract, once: the statuses the database stores and the console shows, the names of the CUSTOM events
 * the console reacts to, how money reads, and how a failed zod parse reads. Isomorphic and dependency-free, so the
 * Drizzle schema, the runtime, the route handlers and client components all import the same words.
 */

/**
 * A thread's status: it mirrors the latest run for the console (the truth about the graph is in the checkpoints).
 * `needs_attention`: its graph version is gone (or a run ended with a decision still pending) and a supervisor must
 * migrate, fork it onto the current version or close it; `closed`: a supervisor closed it with a note. `stopped`: its
 * last run was stopped on purpose (an operator's Stop, a spending limit's "stop", newer input that interrupts it) —
 * not a failure; the next run continues from its last checkpoint, as after a failure.
 */
export const THREAD_STATUSES = [
  "running",
  "interrupted",
  "completed",
  "failed",
  "stopped",
  "idle",
  "needs_attention",
  "closed",
] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];

/** A run's status. `queued` and `running` are active: at most one active run per thread. */
export const RUN_STATUSES = [
  "queued",
  "running",
  "interrupted",
  "succeeded",
  "failed",
  "cancelled",
  "timed_out",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The run statuses that hold a thread (the partial unique index `runs_one_active_per_thread`). */
export const ACTIVE_RUN_STATUSES = ["queued", "running"] as const satisfies readonly RunStatus[];

/** What started a run: new input, a resume of interrupts, a fork from a checkpoint, or a retry of a failed thread. */
export const RUN_KINDS = ["input", "resume", "fork", "retry", "migration"] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/**
 * What new input does while a run of the thread is active ("double texting"), as the agent declares it: `reject` it
 * (409 `conflict:run_active`), `enqueue` it (it runs after the current run, in order, once the thread waits for
 * nothing), `interrupt` the current run (stopped at once, the new input runs next from its last checkpoint), or
 * `rollback` (as interrupt, and the stopped run's checkpoints are marked abandoned: the new input runs from where the
 * thread stood before that run).
 */
export const MULTITASK_STRATEGIES = ["reject", "enqueue", "interrupt", "rollback"] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** A queued input waits for its turn, was started as a run, or was dropped (its thread was closed or erased). */
export const QUEUED_INPUT_STATUSES = ["waiting", "started", "dropped"] as const;
export type QueuedInputStatus = (typeof QUEUED_INPUT_STATUSES)[number];

/** A ledger decision moves `pending → resolved` once; an interrupt that no longer applies is `superseded`. */
export const DECISION_STATUSES = ["pending", "answered", "resolved", "superseded"] as const;
export type DecisionStatus = (typeof DECISION_STATUSES)[number];

/** How an operator answered an interrupt (AG-UI's resume status). */
export const RESUME_STATUSES = ["resolved", "cancelled"] as const;
export type ResumeStatus = (typeof RESUME_STATUSES)[number];

/**
 * A side effect's delivery (`effects.status`): recorded `queued`, claimed by a dispatcher `sending`, confirmed by the
 * provider `delivered`; out of attempts `failed` (an operator task), closed by an operator `handled`. `unconfirmed`:
 * handed over on a channel with nothing to look up (SMTP) by a server that stopped before the provider's answer — it
 * may or may not have arrived, so it is neither called delivered nor sent again unasked (an operator task).
 */
export const EFFECT_STATUSES = [
  "queued",
  "sending",
  "pending",
  "delivered",
  "failed",
  "unconfirmed",
  "handled",
] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

/**
 * What an operator may do about a failed or unconfirmed effect: deliver it again, or close it — refunded by hand (a
 * payment), confirmed to have arrived (an unconfirmed email), or handled otherwise (not needed, or dealt with outside
 * the console). Only the first two closings count as the effect having happened.
 */
export const EFFECT_TASK_ACTIONS = [
  "retry",
  "mark_handled",
  "refunded_manually",
  "confirmed_delivered",
] as const;
export type EffectTaskAction = (typeof EFFECT_TASK_ACTIONS)[number];

/** A side effect of a thread as the API and the thread page show it: what it is, how its delivery stands. */
/** The reference prefix of a refund made with a Stripe test-mode key: recorded, but no real money moved. */
export const STRIPE_TEST_REF = "stripe-test:";

export interface EffectView {
  id: string;
  /** `payment` | `email` (the connector that delivers it). */
  kind: string;
  /** Derived from the decision that authorized it; the provider's Idempotency-Key. */
  idempotencyKey: string;
  /** The business row it delivers (refund or outbox email id). */
  recordId: string;
  status: EffectStatus;
  attempts: number;
  lastError: string | null;
  /** The provider's id once delivered (payment id, SMTP Message-ID). */
  providerRef: string | null;
  /** Delivered to a simulator, not the world (no PAYMENT_URL: nothing was paid; no SMTP_URL: an .eml file). */
  simulated: boolean;
  /** What it does, for people: "Refund €25.00 for ORD-1002", "Email “Your refund” to a@example.com". */
  summary: string;
  createdAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  /** A failed or unconfirmed effect's operator task: open with what may be done, or what was done about it. */
  task: {
    open: boolean;
    actions: EffectTaskAction[];
    resolution: EffectTaskAction | null;
    resolvedBy: string | null;
    resolvedAt: string | null;
  } | null;
}

/** Thread statuses the inbox lists threads by; "all" lists every thread. */
export const INBOX_THREAD_STATUSES = [...THREAD_STATUSES, "all"] as const;
export type InboxThreadStatus = (typeof INBOX_THREAD_STATUSES)[number];

/** Every view of the inbox: pending decisions (the default), or threads by status. */
export const INBOX_STATUSES = ["pending", ...INBOX_THREAD_STATUSES] as const;
export type InboxStatus = (typeof INBOX_STATUSES)[number];

/** Name of the CUSTOM event a recovered run emits where it picks up again. */
export const RUN_RECOVERED_EVENT = "run_recovered";

/**
 * Name of the CUSTOM event a resume run emits right after RUN_STARTED: the decisions it carries, each with its answer,
 * who gave it and when, so a page moves its decision history with the run instead of a view read later.
 */
export const DECISIONS_RECORDED_EVENT = "decisions_recorded";

/** One decision a resume run carries, as its opening event says. */
export interface RecordedDecision {
  interruptId: string;
  status: "resolved" | "cancelled";
  answer: unknown;
  by: string | null;
  at: string | null;
}

/** Name of the CUSTOM event a fork run emits first when its branch may repeat a recorded side effect. */
export const FORK_WARNING_EVENT = "fork_side_effects";

/**
 * Money in minor units as people read it, e.g. "€249.00": English formatting whatever the server's or browser's
 * locale, so a reply the agent writes and the console's figures read the same everywhere.
 */
export function formatMoney(amountCents: number, currency = "EUR"): string {
  let format = moneyFormats.get(currency);
  if (!format) {
    // Made once per currency (a formatter costs far more to make than to use); a code Intl refuses throws here.
    format = new Intl.NumberFormat("en-IE", { style: "currency", currency });
    if (moneyFormats.size >= 64) moneyFormats.clear();
    moneyFormats.set(currency, format);
  }
  return format.format(amountCents / 100);
}
const moneyFormats = new Map<string, Intl.NumberFormat>();

/** The part of a zod error these helpers read (structural, so this module needs no zod import). */
export interface IssueList {
  issues: readonly {
    path: readonly PropertyKey[];
    message: string;
    code?: string;
    keys?: readonly string[];
  }[];
}

/**
 * Each issue as the field it is about and what is wrong. An unknown key is named as the field it is
 * ("min_amount: is not a parameter of this request"), not as a problem of the whole value; `root` names an issue
 * without a path. Fields are cut at 80 characters (a hostile key may be any length).
 */
function named(error: IssueList, root: string): { field: string; message: string }[] {
  return error.issues
    .flatMap((i) =>
      i.code === "unrecognized_keys" && i.keys
        ? i.keys.map((k) => ({
            field: [...i.path, k].map(String).join("."),
            message: "is not a parameter of this request",
          }))
        : [{ field: i.path.map(String).join(".") || root, message: i.message }],
    )
    .map((p) => ({ field: p.field.slice(0, 80), message: p.message }));
}

/** A failed parse as one line, "limit: Too big; status: Invalid option"; `root` names an issue without a path. */
export function issuesMessage(error: IssueList, root = ""): string {
  return named(error, root)
    .map((p) => `${p.field}: ${p.message}`)
    .join("; ");
}

/** The distinct fields a failed parse complains about (`root` for issues about the whole value). */
export function issuePaths(error: IssueList, root = ""): string[] {
  return [...new Set(named(error, root).map((p) => p.field))];
}

/** What the inbox shows and filters on for a decision (the ledger's summary columns), read from its payload. */
export interface DecisionSummary {
  title: string | null;
  orderId: string | null;
  customerName: string | null;
  amountCents: number | null;
  currency: string | null;
  /**
   * The policy's findings the question shows (fraud flag, over the limit, late…): the inbox row and its keyboard
   * confirmation carry them, so nobody approves from the list without the facts. No personal data: codes and the
   * policy's own words.
   */
  findings?: DecisionFinding[] | null;
}

/** One policy finding as the ledger keeps it beside a decision. */
export interface DecisionFinding {
  code: string;
  severity: "info" | "warning" | "block";
  message: string;
}

/** Findings that make a decision one nobody approves from the list with a single key: the thread page, or a second. */
export const FLAGGING_FINDINGS: readonly string[] = ["flagged_order"];

/**
 * An effect a decision authorizes: a refund of an amount to an order, a change of an account's field to a value, a
 * voucher of an amount. The question kinds declare them, decision receipts carry them, and the ledger records such an
 * effect only by spending a matching authorization of its thread (lib/runtime/runs/receipts.ts).
 */
export type Authorization =
  | { effect: "refund"; orderId: string; amountCents: number }
  | { effect: "account_change"; accountEmail: string; field: string; to: string }
  | { effect: "voucher"; amountCents: number; currency: string };

/**
 * A decision receipt as the thread page shows it: which decision, who, how and when, what it authorized (and whether
 * that was spent), and whether its signature verifies on this server.
 */
export interface ReceiptView {
  id: string;
  interruptId: string | null;
  action: string;
  by: string;
  channel: string;
  at: string;
  /** What it authorized: `refund` (orderId, amountCents), `account_change` (a digest, never the value), `voucher`. */
  authorizes: { effect: string; terms: Record<string, unknown>; spent: boolean }[];
  /** Its signature checks out under the key it names (false: changed since it was written, or a key not here). */
  verified: boolean;
  /** Why it does not verify, when it does not. */
  problem: string | null;
  keyId: string;
}
