import type { Message } from "@ag-ui/core";
import type { DecisionView } from "@/lib/contract/views/thread";
import { DECISIONS_RECORDED_EVENT, FORK_WARNING_EVENT, RUN_RECOVERED_EVENT } from "@/lib/contract/wire";
import { appendText, appendToolArgs, upsertTextMessage, upsertToolCall, upsertToolResult } from "./messages";
import { type PendingItem, type ThreadState, withPending } from "./thread-state";

/** The fields of the AG-UI events the page reads; anything else on an event is ignored. */
export interface StreamEvent {
  type: string;
  metadata?: { seq?: unknown } & Record<string, unknown>;
  [key: string]: unknown;
}

/** The per-thread sequence number the server stamped on an event (`metadata.seq`). */
export function seqOf(event: StreamEvent): number | undefined {
  const seq = event.metadata?.seq;
  return typeof seq === "number" && Number.isSafeInteger(seq) ? seq : undefined;
}

/**
 * Apply one AG-UI event. Events are deduplicated by seq: anything at or below `lastSeq` is already in the state
 * (from the server render or an earlier connection) and is dropped, so two overlapping streams never apply an event
 * twice. Message updates are idempotent by id as well: a TEXT_MESSAGE_START for a message the state already holds
 * restarts it, so a server view that already contained a message the stream then replays ends up with one copy.
 */
export function applyEvent(state: ThreadState, event: StreamEvent): ThreadState {
  const seq = seqOf(event);
  if (seq !== undefined && seq <= state.lastSeq) return { ...state, dropped: state.dropped + 1 };
  const next = reduce(state, event);
  return seq === undefined ? next : { ...next, lastSeq: seq, applied: [...state.applied, seq] };
}

/** Fold the events the server logged for the active run into the server-rendered state (they end at its lastSeq). */
export function foldRunEvents(state: ThreadState, events: StreamEvent[]): ThreadState {
  const first = events.map(seqOf).find((s) => s !== undefined);
  if (first === undefined) return state;
  const folded = events.reduce(applyEvent, { ...state, lastSeq: first - 1 });
  return { ...folded, lastSeq: Math.max(folded.lastSeq, state.lastSeq) };
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

function reduce(state: ThreadState, e: StreamEvent): ThreadState {
  switch (e.type) {
    case "RUN_STARTED":
      return withPending(
        { ...state, status: "running", activeRunId: str(e.runId) || null, runError: null, steps: [] },
        [],
      );
    case "STEP_STARTED":
      return { ...state, steps: [...state.steps.filter((s) => s !== e.stepName), str(e.stepName)] };
    case "STEP_FINISHED":
      return { ...state, steps: state.steps.filter((s) => s !== e.stepName) };
    case "TEXT_MESSAGE_START":
      return {
        ...state,
        messages: upsertTextMessage(state.messages, str(e.messageId), str(e.role) || "assistant"),
        streamingIds: [...state.streamingIds.filter((id) => id !== e.messageId), str(e.messageId)],
      };
    case "TEXT_MESSAGE_CONTENT":
      return { ...state, messages: appendText(state.messages, str(e.messageId), str(e.delta)) };
    case "TEXT_MESSAGE_END":
      return { ...state, streamingIds: state.streamingIds.filter((id) => id !== e.messageId) };
    case "TOOL_CALL_START":
      return {
        ...state,
        messages: upsertToolCall(
          state.messages,
          str(e.toolCallId),
          str(e.toolCallName),
          str(e.parentMessageId) || undefined,
        ),
      };
    case "TOOL_CALL_ARGS":
      return { ...state, messages: appendToolArgs(state.messages, str(e.toolCallId), str(e.delta)) };
    case "TOOL_CALL_RESULT":
      return {
        ...state,
        messages: upsertToolResult(state.messages, str(e.messageId), str(e.toolCallId), str(e.content)),
      };
    case "MESSAGES_SNAPSHOT":
      return Array.isArray(e.messages)
        ? { ...state, messages: e.messages as Message[], streamingIds: [] }
        : state;
    case "STATE_SNAPSHOT":
      return isRecord(e.snapshot) ? { ...state, values: e.snapshot } : state;
    case "RUN_FINISHED":
      return finished(state, e);
    case "RUN_ERROR":
      return {
        ...state,
        status: "failed",
        activeRunId: null,
        steps: [],
        streamingIds: [],
        runError: { code: str(e.code) || "internal:run_failed", message: str(e.message) },
      };
    case "CUSTOM":
      return custom(state, e);
    default:
      return state;
  }
}

function finished(state: ThreadState, e: StreamEvent): ThreadState {
  const outcome = isRecord(e.outcome) ? e.outcome : {};
  // Stopped on purpose (AG-UI 1.0's `cancelled`): who stopped it and why ride in `metadata.stop`.
  if (outcome.type === "cancelled") {
    const stop = isRecord(e.metadata) && isRecord(e.metadata.stop) ? e.metadata.stop : {};
    return withPending(
      {
        ...state,
        status: "stopped",
        activeRunId: null,
        steps: [],
        streamingIds: [],
        runError: {
          code: str(stop.code) || "conflict:run_cancelled",
          message: str(stop.message) || "Stopped.",
        },
      },
      [],
    );
  }
  const interrupts =
    outcome.type === "interrupt" && Array.isArray(outcome.interrupts) ? outcome.interrupts : [];
  const pending = interrupts.filter(isRecord).map(
    (i): PendingItem => ({
      interruptId: str(i.id),
      action: str(i.reason) || "unknown",
      payload: isRecord(i.metadata) ? i.metadata.payload : undefined,
      raw: isRecord(i.metadata) ? i.metadata.payload : undefined,
    }),
  );
  const status = pending.length > 0 ? "interrupted" : "completed";
  return withPending(
    {
      ...state,
      status,
      activeRunId: null,
      steps: [],
      streamingIds: [],
      decisions: asked(state.decisions, pending),
    },
    pending,
  );
}

/**
 * The decision history with the questions a run just asked: each one it does not hold yet joins it as waiting (its
 * deadline and checkpoint come with the next view), so the history never lags the question shown above it.
 */
function asked(decisions: DecisionView[], pending: PendingItem[]): DecisionView[] {
  const known = new Set(decisions.map((d) => d.interruptId));
  const fresh = pending.filter((p) => p.interruptId && !known.has(p.interruptId));
  if (fresh.length === 0) return decisions;
  return [
    ...decisions,
    ...fresh.map(
      (p): DecisionView => ({
        interruptId: p.interruptId,
        action: p.action,
        status: "pending",
        answer: null,
        resolvedBy: null,
        resolvedAt: null,
        checkpointId: "",
        dueAt: "",
        escalatedAt: null,
        escalatedTo: [],
      }),
    ),
  ];
}

/** A resume run's opening word: the decisions it carries are taken — with what, by whom and when. */
function recorded(decisions: DecisionView[], value: unknown): DecisionView[] {
  if (!Array.isArray(value)) return decisions;
  const taken = new Map(value.filter(isRecord).map((r) => [str(r.interruptId), r] as const));
  if (taken.size === 0) return decisions;
  return decisions.map((d) => {
    const r = taken.get(d.interruptId);
    if (!r) return d;
    const cancelled = r.status === "cancelled";
    return {
      ...d,
      status: cancelled ? "cancelled" : "resolved",
      answer: cancelled ? null : r.answer,
      resolvedBy: str(r.by) || d.resolvedBy,
      resolvedAt: str(r.at) || d.resolvedAt,
    };
  });
}

function withNotice(state: ThreadState, notice: string): ThreadState {
  return state.notices.includes(notice) ? state : { ...state, notices: [...state.notices, notice] };
}

function custom(state: ThreadState, e: StreamEvent): ThreadState {
  if (e.name === RUN_RECOVERED_EVENT) {
    const attempt =
      isRecord(e.value) && typeof e.value.attempt === "number" ? ` (attempt ${e.value.attempt})` : "";
    return {
      ...state,
      notices: [
        ...state.notices,
        `The server restarted during this run; another process picked it up${attempt}.`,
      ],
    };
  }
  if (e.name === DECISIONS_RECORDED_EVENT) {
    return { ...state, decisions: recorded(state.decisions, e.value) };
  }
  if (e.name === FORK_WARNING_EVENT) {
    return withNotice(state, "This branch re-ran steps that have side effects.");
  }
  return state;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
