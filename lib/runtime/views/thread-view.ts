import { listEscalationRecipients } from "@/lib/db/queries/notifications";
import "server-only";
import type { BaseMessage } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";
import { stateSnapshot, toAguiMessages } from "@/lib/agui";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import { AppError } from "@/lib/contract/errors";
import type { DecisionView, PendingInterruptView, ThreadView } from "@/lib/contract/views/thread";
import type { AppDb } from "@/lib/db/client";
import { listThreadDecisions } from "@/lib/db/queries/decisions";
import { readRunEvents } from "@/lib/db/queries/events";
import { listWaitingInputs } from "@/lib/db/queries/queued-inputs";
import { getActiveRun, getLastFailedRun, lastFork } from "@/lib/db/queries/runs";
import { getThread } from "@/lib/db/queries/threads";
import type { Decision, Thread } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { isErasedSubject } from "@/lib/db/vault";
import { listReceiptViews } from "../../delivery/receipts";
import {
  type AgentDefinition,
  getAgent,
  getAgentGraph,
  hasAgent,
  readableAgent,
  versionNotServed,
} from "../agents/registry";
import { ticketLines, ticketOf } from "../runs/intake";
import { listEffectViews } from "./effects";

/** The view's shapes are the browser's (lib/contract/views/thread.ts). */
export type { DecisionView, PendingInterruptView, ThreadView };

/** Of the pending questions, the one asking `answered` again: the same question, else the only one of its kind. */
function askedAgain(
  answered: { action: string; payload: unknown },
  pending: readonly PendingInterruptView[],
): string | null {
  const open = pending.filter((p) => p.action === answered.action && !p.answeredBy);
  const same = canonicalPayload(answered.payload);
  const match =
    open.find((p) => canonicalPayload(p.raw) === same) ?? (open.length === 1 ? open[0] : undefined);
  return match?.interruptId ?? null;
}

/** Everything the thread page needs, from the thread row, the graph state at the head, and the ledger. */
export async function getThreadView({ db, threadId }: { db: AppDb; threadId: string }): Promise<ThreadView> {
  const thread = await getThread({ db, threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  const agent = readableAgent(thread);
  const graph = await getAgentGraph(agent);
  const [state, decisions, active, effects, failedRun, waiting, receipts, erased] = await Promise.all([
    graph.getState({ configurable: { thread_id: threadId } }),
    listThreadDecisions({ db, threadId }),
    getActiveRun({ db, threadId }),
    listEffectViews({ db, threadId }),
    thread.status === "failed" || thread.status === "stopped"
      ? getLastFailedRun({ db, threadId })
      : undefined,
    listWaitingInputs({ db, threadId }),
    listReceiptViews({ db, threadId }),
    isErasedSubject(db, thread.subjectId),
  ]);
  const raised = new Map(decisions.map((d) => [d.interruptId, d]));
  const escalated = decisions.filter((d) => d.escalatedAt !== null).map((d) => d.interruptId);
  const [escalations, fork] = await Promise.all([
    listEscalationRecipients({ db, interruptIds: escalated }),
    lastFork({ db, threadId }),
  ]);
  const values = (state.values ?? {}) as Record<string, unknown>;
  const pendingInterrupts = await pendingOf(db, agent, state, raised);
  const differently = (
    fork?.input as { answerDifferently?: { interruptId: string; otherHead: string | null } } | null
  )?.answerDifferently;
  const answered = differently ? raised.get(differently.interruptId) : undefined;
  return {
    threadId,
    forked: fork !== undefined,
    erased,
    answeringDifferently:
      differently && answered
        ? {
            interruptId: answered.interruptId,
            action: answered.action,
            answer: answered.answer,
            resolvedBy: answered.resolvedBy,
            resolvedAt: answered.resolvedAt?.toISOString() ?? null,
            otherHead: differently.otherHead,
            askedAgain: askedAgain(answered, pendingInterrupts),
          }
        : null,
    agentId: thread.agentId,
    agentVersion: thread.agentVersion,
    attention: attentionOf(thread),
    title: thread.title,
    customerMessage: thread.customerMessage,
    orderRef: thread.orderRef,
    ticket: ticketOf(thread),
    ticketLines: hasAgent(thread.agentId) ? ticketLines(getAgent(thread.agentId), ticketOf(thread)) : [],
    status: thread.status,
    activeRunId: active?.id ?? null,
    values: stateSnapshot(values),
    messages: toAguiMessages((values.messages as BaseMessage[] | undefined) ?? []),
    // While a run is active the head is moving: its interrupts are not decisions yet.
    pendingInterrupts: active ? [] : pendingInterrupts,
    decisions: decisions.map((d) => decisionView(d, escalations)),
    effects,
    receipts,
    failure: failedRun
      ? { code: failedRun.errorCode ?? "internal:run_failed", message: failedRun.errorMessage ?? "" }
      : null,
    queuedInputs: waiting.map((q) => ({
      runId: q.id,
      text: (q.input as { text?: string }).text ?? "",
      from: q.startedByLabel ?? q.startedBy,
      strategy: q.strategy,
      at: q.createdAt.toISOString(),
    })),
    lastSeq: thread.lastSeq,
    checkpointId: (state.config?.configurable?.checkpoint_id as string | undefined) ?? null,
    updatedAt: thread.updatedAt.toISOString(),
  };
}

/** The questions the head waits on, read through the agent's contract (never from `next`). */
async function pendingOf(
  db: Queryable,
  agent: AgentDefinition,
  state: StateSnapshot,
  raised: Map<string, Decision>,
): Promise<PendingInterruptView[]> {
  const interrupts = state.tasks.flatMap((t) => t.interrupts ?? []).filter((i) => typeof i.id === "string");
  return Promise.all(
    interrupts.map(async (i): Promise<PendingInterruptView> => {
      const parsed = agent.interrupts.parse(i.value);
      // What the page offers is computed from the ledgers now, as the answer will be checked (`interrupts.current`).
      const payload =
        parsed.ok && agent.interrupts.current
          ? await agent.interrupts.current({ db, payload: parsed.payload })
          : parsed.ok
            ? parsed.payload
            : null;
      return {
        interruptId: i.id as string,
        action: parsed.ok ? parsed.action : "unknown",
        payload,
        raw: i.value,
        ...(parsed.ok ? {} : { invalid: parsed.error }),
        raisedAt: raised.get(i.id as string)?.createdAt.toISOString() ?? null,
        ...answeredBy(raised.get(i.id as string)),
      };
    }),
  );
}

/** One decision of the ledger as the page shows it, with where its escalation went. */
function decisionView(
  d: Decision,
  escalations: Awaited<ReturnType<typeof listEscalationRecipients>>,
): DecisionView {
  return {
    interruptId: d.interruptId,
    action: d.action,
    status: d.status,
    answer: d.answer,
    resolvedBy: d.resolvedBy,
    resolvedAt: d.resolvedAt?.toISOString() ?? null,
    checkpointId: d.checkpointId,
    dueAt: d.dueAt.toISOString(),
    escalatedAt: d.escalatedAt?.toISOString() ?? null,
    escalatedTo: escalations
      .filter((e) => e.interruptId === d.interruptId)
      .map(({ kind, target, status }) => ({ kind, target, status })),
  };
}

/**
 * While a run is active the checkpoint lags behind what was streamed (a reply half written lives only in the event
 * log): the active run's logged events up to the view's `lastSeq`, so a page rendered from the view and these ends
 * exactly at `lastSeq` and the browser goes on with `events?after=lastSeq`. None when no run is active.
 */
export async function readActiveRunEvents({
  db,
  view,
}: {
  db: Queryable;
  view: Pick<ThreadView, "threadId" | "activeRunId" | "lastSeq">;
}): Promise<Record<string, unknown>[]> {
  if (!view.activeRunId) return [];
  const logged = await readRunEvents({ db, threadId: view.threadId, runId: view.activeRunId });
  return logged.filter((e) => e.seq <= view.lastSeq).map((e) => e.event);
}

/** Who answered a decision that waits for its siblings (`answered` in the ledger). */
function answeredBy(
  decision: { status: string; resolvedBy: string | null; resolvedAt: Date | null } | undefined,
) {
  if (decision?.status !== "answered") return {};
  return {
    answeredBy: decision.resolvedBy ?? "someone",
    answeredAt: decision.resolvedAt?.toISOString() ?? "",
  };
}

/** Why a thread needs a supervisor, read from its pinned version against what this process has. */
function attentionOf(thread: Thread): ThreadView["attention"] {
  const current = hasAgent(thread.agentId) ? getAgent(thread.agentId) : null;
  const canMigrate = Boolean(current?.migrations?.some((m) => m.from === thread.agentVersion));
  // A version this server does not run (refused at start, or not deployed): whatever the status, say so and the fix.
  const notServed = versionNotServed(thread);
  if (notServed) return { reason: notServed, currentVersion: current?.version ?? null, canMigrate };
  if (thread.status !== "needs_attention") return null;
  return {
    reason: "A run ended while a decision was still pending in the ledger: the graph no longer asks it.",
    currentVersion: current?.version ?? null,
    canMigrate,
  };
}
