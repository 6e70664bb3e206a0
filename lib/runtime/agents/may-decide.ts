import "server-only";
import { appErrorOf, type ErrorCode } from "@/lib/contract/errors";
import { hasRole, type Principal } from "@/lib/contract/roles";
import type { limitsBinding } from "@/lib/db/queries/authority";
import {
  listPendingDecisions,
  listPendingDecisionsOf,
  listResolvedDecisions,
  listStagedDecisions,
  listStagedDecisionsOf,
} from "@/lib/db/queries/decisions";
import {
  type InvolvedPrincipal,
  listInvolvedPrincipals,
  listInvolvedPrincipalsOf,
} from "@/lib/db/queries/involved";
import { getThread, getThreads } from "@/lib/db/queries/threads";
import type { Decision, Thread } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { authorizationsOf, currencyOf, decidedOf } from "../runs/settle";
import { amountAuthorized, refuseOverAuthority } from "./authority";
import type { AgentDefinition, DecisionAttempt } from "./registry";
import { readableAgent } from "./registry";
import { refuseSystemActing } from "./system-policy";

/*
 * Before the click: may this principal take the decision that acts on the world (approve, send, grant) on a pending
 * request, and if not, why. The same checks a decision meets when it is taken — the route's role, an intake key's
 * scope, and the agent's policy fed by `listInvolvedPrincipals` (four-eyes) — asked with the agent's acting answer
 * instead of a real one. Rejecting stays open to every operator; this says nothing about it.
 */

/** What a principal may do on one pending decision. */
export type DecideVerdict =
  | { interruptId: string; action: string; may: true }
  | {
      interruptId: string;
      action: string;
      may: false;
      /** The code the decision would be refused with (`forbidden:four_eyes_own_thread`…). */
      code: ErrorCode;
      /** The refusal in the operator's words (the policy's message). */
      reason: string;
    };

/** Verdicts for every pending decision of one thread (empty when nothing is pending or the thread is unknown). */
export async function mayDecide({
  db,
  threadId,
  principal,
  answers,
}: {
  db: Queryable;
  threadId: string;
  principal: Principal;
  /** Ask about these answers (interrupt id → answer) instead of each decision's acting answer (bulk, before it claims). */
  answers?: ReadonlyMap<string, unknown>;
}): Promise<DecideVerdict[]> {
  const thread = await getThread({ db, threadId });
  if (!thread) return [];
  const pending = await listPendingDecisions({ db, threadId });
  return verdictsFor({
    db,
    thread,
    pending,
    principal,
    answers,
    involvedIn: (t) => listInvolvedPrincipals({ db, thread: t }),
    stagedIn: (t) => listStagedDecisions({ db, threadId: t.id }),
    decidedIn: (t) => listResolvedDecisions({ db, threadId: t.id }),
  });
}

/**
 * {@link mayDecide} for several threads (an inbox page): thread id → verdicts, with the threads, their pending
 * decisions and (for the threads whose decisions act on the world) who was involved read in three statements rather
 * than three per thread. `onThreadError` turns an error met on one thread into that thread's verdicts (default: it
 * propagates).
 */
export async function mayDecideThreads({
  db,
  threadIds,
  principal,
  onThreadError = (error) => {
    throw error;
  },
}: {
  db: Queryable;
  threadIds: readonly string[];
  principal: Principal;
  onThreadError?: (error: unknown) => DecideVerdict[];
}): Promise<Map<string, DecideVerdict[]>> {
  const ids = [...new Set(threadIds)];
  const limitsRead = new Map<string, ReturnType<typeof limitsBinding>>();
  const found = await getThreads({ db, threadIds: ids });
  const pending = await listPendingDecisionsOf({ db, threadIds: [...found.keys()] });
  const involvedIn = batchedInvolved(db);
  const staged = await listStagedDecisionsOf({ db, threadIds: [...found.keys()] });
  const decidedIn = batchedResolved(db);
  const verdicts = await Promise.all(
    ids.map(async (threadId): Promise<[string, DecideVerdict[]]> => {
      const thread = found.get(threadId);
      if (!thread) return [threadId, []];
      try {
        return [
          threadId,
          await verdictsFor({
            db,
            limitsRead,
            thread,
            pending: pending.get(threadId) ?? [],
            principal,
            involvedIn,
            stagedIn: async (t) => staged.get(t.id) ?? [],
            decidedIn,
          }),
        ];
      } catch (error) {
        return [threadId, onThreadError(error)];
      }
    }),
  );
  return new Map(verdicts);
}

/**
 * Who was involved in a thread, asked by many threads at once: the threads that ask in the same tick are read
 * together in one statement (every caller asks before its first await, see {@link mayDecideThreads}).
 */
function batchedInvolved(db: Queryable): (thread: Thread) => Promise<InvolvedPrincipal[]> {
  type Read = Promise<Map<string, InvolvedPrincipal[]>>;
  let batch: { threads: Thread[]; read: Read } | null = null;
  return async (thread) => {
    if (!batch) {
      const next: { threads: Thread[]; read: Read } = { threads: [], read: Promise.resolve(new Map()) };
      // The statement goes out once every caller of this tick has joined.
      next.read = new Promise<void>((resolve) => queueMicrotask(resolve)).then(() => {
        batch = null;
        return listInvolvedPrincipalsOf({ db, threads: next.threads });
      });
      batch = next;
    }
    batch.threads.push(thread);
    return (await batch.read).get(thread.id) ?? [];
  };
}

/** The decisions threads have taken, asked by many threads at once: read together in one statement per tick. */
function batchedResolved(db: Queryable): (thread: Thread) => Promise<Decision[]> {
  type Read = Promise<Map<string, Decision[]>>;
  let batch: { ids: string[]; read: Read } | null = null;
  return async (thread) => {
    if (!batch) {
      const next: { ids: string[]; read: Read } = { ids: [], read: Promise.resolve(new Map()) };
      next.read = new Promise<void>((resolve) => queueMicrotask(resolve)).then(() => {
        batch = null;
        return listPendingDecisionsOf({ db, threadIds: next.ids, status: "resolved" });
      });
      batch = next;
    }
    batch.ids.push(thread.id);
    return (await batch.read).get(thread.id) ?? [];
  };
}

/** Whether any verdict is a refusal: the first one (for a one-line mark in a list), or null. */
export function firstRefusal(
  verdicts: readonly DecideVerdict[],
): Extract<DecideVerdict, { may: false }> | null {
  return (verdicts.find((v) => !v.may) as Extract<DecideVerdict, { may: false }> | undefined) ?? null;
}

async function verdictsFor({
  db,
  limitsRead,
  thread,
  pending,
  principal,
  involvedIn,
  stagedIn,
  decidedIn,
  answers,
}: {
  db: Queryable;
  /** The principal's limits read so far in this request (one read per agent and question kind). */
  limitsRead?: Map<string, ReturnType<typeof limitsBinding>>;
  thread: Thread;
  pending: Decision[];
  principal: Principal;
  answers?: ReadonlyMap<string, unknown>;
  involvedIn: (thread: Thread) => Promise<InvolvedPrincipal[]>;
  /** The decisions the thread has taken (read only when an answer acts): the policy's `decided`. */
  decidedIn: (thread: Thread) => Promise<Decision[]>;
  /** Answers already taken in the same super-step (parallel reviews): the policy's `siblings`, as when deciding. */
  stagedIn: (thread: Thread) => Promise<Decision[]>;
}): Promise<DecideVerdict[]> {
  if (pending.length === 0) return [];
  const refused = roleRefusal(principal);
  let agent: AgentDefinition | null = null;
  try {
    agent = readableAgent(thread);
  } catch {
    agent = null; // an agent this process does not have: the role is all that can be said
  }
  let involved: InvolvedPrincipal[] | null = null;
  let decided: DecisionAttempt<unknown>["decided"] | null = null;
  let siblings: DecisionAttempt<unknown>["siblings"] | null = null;
  const verdicts: DecideVerdict[] = [];
  for (const decision of pending) {
    const base = { interruptId: decision.interruptId, action: decision.action };
    if (refused) {
      verdicts.push({ ...base, may: false, ...refused });
      continue;
    }
    const parsed = agent?.interrupts.parse(decision.payload);
    const given = answers?.has(decision.interruptId);
    const answer = given
      ? answers?.get(decision.interruptId)
      : parsed?.ok
        ? agent?.interrupts.actingAnswer?.(parsed.payload)
        : null;
    const acts = !!agent && !!parsed?.ok && answer != null && agent.actsOnIt(parsed.payload, answer);
    // A given answer meets the whole policy (a review's role binds a rejection too); the acting one only if it acts.
    if (!agent || !parsed?.ok || answer == null || (!acts && !given)) {
      verdicts.push({ ...base, may: true });
      continue;
    }
    if (acts) {
      involved ??= await involvedIn(thread);
      decided ??= (await decidedIn(thread)).map(decidedOf);
    }
    siblings ??= (await stagedIn(thread)).map((d) => ({
      interruptId: d.interruptId,
      action: d.action,
      answer: d.answer,
      resolvedById: d.resolvedById,
    }));
    try {
      refuseSystemActing({ agent, principal, payload: parsed.payload, action: parsed.action, answer });
      agent.policy({
        interruptId: decision.interruptId,
        payload: parsed.payload,
        answer,
        principal,
        involved: acts ? (involved ?? []) : [],
        siblings,
        decided: acts ? (decided ?? []) : [],
      });
      // The same delegated authority as when deciding (lib/runtime/runs/settle.ts), without taking its lock.
      if (acts) {
        await refuseOverAuthority({
          db,
          principal,
          agentId: agent.id,
          action: parsed.action,
          amountCents: amountAuthorized(authorizationsOf(agent, parsed.payload, answer)),
          currency: currencyOf(parsed.payload),
          customer: thread.subjectId,
          memo: limitsRead,
        });
      }
      verdicts.push({ ...base, may: true });
    } catch (error) {
      // Read as a shape: an agent's policy may throw an AppError from another bundle of lib/errors (Next splits
      // server chunks), where `instanceof` is false.
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      verdicts.push({ ...base, may: false, ...refusal });
    }
  }
  return verdicts;
}

function refusalOf(error: unknown): { code: ErrorCode; reason: string } | null {
  const known = appErrorOf(error);
  return known ? { code: known.code, reason: known.message } : null;
}

/** Deciding needs an operator: viewers and intake keys are refused whatever the request. */
function roleRefusal(principal: Principal): { code: ErrorCode; reason: string } | null {
  if (principal.kind === "key") {
    return {
      code: "forbidden:api_key_scope",
      reason: "An intake key cannot decide; decisions need an operator.",
    };
  }
  if (!hasRole(principal.role, "operator")) {
    return { code: "forbidden:role", reason: "Your role lets you read this request, not decide it." };
  }
  return null;
}
