import type { DecisionFinding } from "./wire";

/*
 * The operator's inbox as the API and the browser see it (browser-safe): its filters, its pages of decisions and
 * threads, who handles each, and the queue's neighbours. Read by lib/db/queries/inbox.ts.
 */

export const INBOX_DEFAULT_LIMIT = 50;
export const INBOX_MAX_LIMIT = 200;

/** Filters on pending decisions (status "pending" only). */
export interface InboxFilter {
  /** The interrupt contract's action, or "unknown". */
  action?: string;
  /** Only decisions with an amount ≥ this (minor units). */
  minAmountCents?: number;
  /** Only decisions with an amount ≤ this (minor units). */
  maxAmountCents?: number;
  /** Only decisions at least this old. */
  olderThanSeconds?: number;
  /** Only decisions claimed (live) by this user id ("My queue"), or, when null, claimed by nobody ("Unassigned"). */
  claimedBy?: string | null;
  /** Only overdue decisions that were escalated (the supervisors' view). */
  escalated?: boolean;
  /** Only decisions of threads pinned to this agent version (`threads.agent_version`). */
  agentVersion?: { agentId: string; version: string };
}

/** Who is handling a pending decision (a live claim). */
export interface InboxClaim {
  userId: string;
  userLabel: string;
  /** ISO 8601. */
  claimedAt: string;
}

/** A pending decision as the inbox shows it (the ledger's summary columns, no payload). */
export interface InboxDecision {
  interruptId: string;
  action: string;
  title: string | null;
  orderId: string | null;
  customerName: string | null;
  amountCents: number | null;
  currency: string | null;
  /** The policy's findings the question shows (fraud flag, over the limit…), or null when it has none. */
  findings: DecisionFinding[] | null;
  /** ISO 8601 (UTC, microseconds). */
  createdAt: string;
  /** Seconds since it was raised, by the database clock. */
  ageSeconds: number;
  /** When it is due (ISO 8601, microseconds), and the seconds left until then (negative: overdue). */
  dueAt: string;
  secondsLeft: number;
  /** When it was escalated for being overdue (ISO 8601), or null. */
  escalatedAt: string | null;
  /** Who is handling it, or null. */
  claim: InboxClaim | null;
}

/** The thread a decision belongs to, or a listed thread. */
export interface InboxThread {
  threadId: string;
  title: string;
  orderRef: string | null;
  /** idle | running | interrupted | completed | failed */
  status: string;
  /** ISO 8601 (UTC, microseconds). */
  updatedAt: string;
}

/** status "pending": one item per pending decision, soonest due first. */
export interface InboxDecisionItem {
  kind: "decision";
  decision: InboxDecision;
  thread: InboxThread;
  /** Set when the caller may not take its acting answer (four-eyes, role): the code and the reason. */
  refusal?: { code: string; reason: string };
}

/** Other statuses: one item per thread, newest-updated first, with its pending decisions (oldest first). */
export interface InboxThreadItem {
  kind: "thread";
  thread: InboxThread;
  pendingDecisions: InboxDecision[];
}

export interface InboxPage<T> {
  items: T[];
  /** How many items the filters match in all (pending decisions; absent for the threads views). */
  total?: number;
  /** Opaque; pass back as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

/** A thread next to this one in the queue: where `n` / `p` on the thread page go. */
export interface QueueNeighbour {
  threadId: string;
  title: string;
}
