import type { Message } from "@ag-ui/core";
import type { DecisionView, ThreadView } from "@/lib/contract/views/thread";
import type { DecideVerdictJson } from "./use-may-decide";

/** A decision the agent is waiting for, as the page holds it (from the thread view or a RUN_FINISHED outcome). */
export interface PendingItem {
  interruptId: string;
  action: string;
  /** The payload as the server parsed it, or null when it does not fit the contract. */
  payload: unknown;
  raw: unknown;
  /** Why the server could not read the payload (the page then shows the fallback view). */
  invalid?: string;
  /** Answered already, waiting for the other decisions of its step: who answered, and when. */
  answeredBy?: string;
  answeredAt?: string;
}

/** Who took a decision this page was showing, when the 409 told us (the ledger says it otherwise). */
export interface ConflictDetails {
  resolvedBy: string | null;
  resolvedAt: string | null;
  answer: unknown;
  message: string;
  /** The thread moved on (a fork, say): nobody took this decision, it no longer applies. */
  superseded?: boolean;
}

/** A decision this page showed that somebody else took (another tab, another operator) or that no longer applies. */
export interface ClosedItem extends PendingItem {
  conflict?: ConflictDetails;
}

export type ConnectionState = "idle" | "live" | "reconnecting";

/** Everything the thread page renders; one immutable snapshot per change. */
export interface ThreadState {
  threadId: string;
  title: string;
  customerMessage: string;
  /** idle | running | interrupted | completed | failed */
  status: string;
  activeRunId: string | null;
  messages: Message[];
  /** Text messages still streaming in. */
  streamingIds: string[];
  /** Steps open right now, in the order they started (the last one is the current step). */
  steps: string[];
  values: Record<string, unknown>;
  pending: PendingItem[];
  closed: ClosedItem[];
  decisions: DecisionView[];
  /** New input waiting to run after the current run and decisions (double texting), oldest first. */
  queuedInputs: ThreadView["queuedInputs"];
  /** The thread was forked at some point: only then can a branch and the effect ledger disagree. */
  forked: boolean;
  /** The customer's personal data was erased: the agent's state of the thread is gone (see ThreadView). */
  erased: boolean;
  /** The head's branch answers a decision otherwise ("Answer differently"): what the other line answered. */
  answeringDifferently: ThreadView["answeringDifferently"];
  /** Seq of the last event this state contains: the server view's lastSeq, then every event applied after it. */
  lastSeq: number;
  /** Every seq applied to this state, in order (a page that never applies one twice shows strictly increasing). */
  applied: number[];
  /** Events that arrived again after they were applied (a reconnect overlap) and were dropped. */
  dropped: number;
  runError: { code: string; message: string } | null;
  notices: string[];
  /** Interrupts this tab is answering or has answered: when they leave `pending`, nobody else took them. */
  ownIds: string[];
  /**
   * Forms this tab answered that left `pending` before the answer's outcome came back: if the server then refuses
   * the answer (somebody else took the decision first), `markConflict` closes them from here, saying who.
   */
  answered: PendingItem[];
  sending: boolean;
  connection: ConnectionState;
  reconnectAttempt: number;
  /** The server stopped answering the page's polls (nothing running): shown until a poll gets through again. */
  serverDown: boolean;
  /** The last refusal or failure to show the operator. */
  error: { code: string; message: string } | null;
}

/** The JSON of `GET /api/threads/{id}`. */
export type ThreadViewJson = ThreadView & {
  /** Whether the signed-in operator may take each pending decision, and why not (`mayDecide`). */
  mayDecide?: DecideVerdictJson[];
};

/** The page's first state: the server view, plus the active run's events the server logged up to `view.lastSeq`. */
export function initialThreadState(view: ThreadViewJson): ThreadState {
  return {
    threadId: view.threadId,
    title: view.title,
    customerMessage: view.customerMessage,
    status: view.activeRunId ? "running" : view.status,
    activeRunId: view.activeRunId,
    messages: view.messages,
    streamingIds: [],
    steps: [],
    values: view.values,
    pending: view.pendingInterrupts.map(toPendingItem),
    closed: [],
    decisions: view.decisions,
    queuedInputs: view.queuedInputs ?? [],
    forked: view.forked ?? false,
    erased: view.erased ?? false,
    answeringDifferently: view.answeringDifferently ?? null,
    lastSeq: view.lastSeq,
    applied: [],
    dropped: 0,
    runError: view.failure ?? null,
    notices: [],
    ownIds: [],
    answered: [],
    sending: false,
    connection: "idle",
    reconnectAttempt: 0,
    serverDown: false,
    error: null,
  };
}

function toPendingItem(p: ThreadViewJson["pendingInterrupts"][number]): PendingItem {
  return {
    interruptId: p.interruptId,
    action: p.action,
    payload: p.payload,
    raw: p.raw,
    ...(p.invalid ? { invalid: p.invalid } : {}),
    ...(p.answeredBy ? { answeredBy: p.answeredBy, answeredAt: p.answeredAt } : {}),
  };
}

/**
 * Replace the pending decisions. Any that leave without this tab having answered them were taken elsewhere: they
 * move to `closed`, so the page can say who took them instead of silently dropping the form.
 */
export function withPending(state: ThreadState, next: PendingItem[]): ThreadState {
  const keep = new Set(next.map((p) => p.interruptId));
  const closedIds = new Set(state.closed.map((c) => c.interruptId));
  const gone = state.pending.filter(
    (p) => !keep.has(p.interruptId) && !state.ownIds.includes(p.interruptId) && !closedIds.has(p.interruptId),
  );
  const mine = state.pending.filter((p) => !keep.has(p.interruptId) && state.ownIds.includes(p.interruptId));
  return {
    ...state,
    answered:
      mine.length > 0
        ? [...state.answered.filter((a) => !mine.some((m) => m.interruptId === a.interruptId)), ...mine]
        : state.answered,
    // A decision this tab already knows was taken elsewhere (a 409 said so) stays closed: a view read before that
    // answer committed must not open its form again next to the closed one.
    pending: next.filter((p) => !closedIds.has(p.interruptId)),
    closed: gone.length > 0 ? [...state.closed, ...gone] : state.closed,
  };
}

/**
 * Merge a fresh server view. A view older than what the page already applied is ignored. While a run is active the
 * view's messages lag behind the live events, so only the ledger and status are taken and the page keeps following
 * the stream from its own last seq; once no run is active the view is the whole truth.
 */
export function applyView(state: ThreadState, view: ThreadViewJson): ThreadState {
  if (view.lastSeq < state.lastSeq) return state;
  const base = {
    ...state,
    title: view.title,
    customerMessage: view.customerMessage,
    decisions: view.decisions,
    queuedInputs: view.queuedInputs ?? state.queuedInputs,
    forked: view.forked ?? state.forked,
    erased: view.erased ?? state.erased,
    answeringDifferently: view.answeringDifferently ?? null,
  };
  if (view.activeRunId) {
    return withPending({ ...base, status: "running", activeRunId: view.activeRunId }, []);
  }
  return withPending(
    {
      ...base,
      status: view.status,
      activeRunId: null,
      messages: view.messages,
      values: view.values,
      streamingIds: [],
      steps: [],
      lastSeq: view.lastSeq,
      runError:
        view.status === "failed" || view.status === "stopped" ? (view.failure ?? state.runError) : null,
    },
    view.pendingInterrupts.map(toPendingItem),
  );
}

/** A 409 said somebody else took these decisions: close their forms with who, what and when. */
export function markConflict(
  state: ThreadState,
  interruptId: string,
  conflict: ConflictDetails,
): ThreadState {
  const item =
    state.pending.find((p) => p.interruptId === interruptId) ??
    state.closed.find((c) => c.interruptId === interruptId) ??
    // Answered here, and gone from a fresh view before the refusal came back (the run that took it moved on).
    state.answered.find((a) => a.interruptId === interruptId);
  if (!item) return state;
  return {
    ...state,
    ownIds: state.ownIds.filter((id) => id !== interruptId),
    answered: state.answered.filter((a) => a.interruptId !== interruptId),
    pending: state.pending.filter((p) => p.interruptId !== interruptId),
    closed: [...state.closed.filter((c) => c.interruptId !== interruptId), { ...item, conflict }],
  };
}
