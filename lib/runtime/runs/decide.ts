import "server-only";
import { randomUUID } from "node:crypto";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/open";
import type { AuditInput } from "@/lib/db/queries/audit";
import { listOpenDecisions } from "@/lib/db/queries/decisions";
import { lockThread } from "@/lib/db/queries/threads";
import { env } from "@/lib/platform/env";
import type { DecisionChannel, NewReceipt } from "../../delivery/receipts";
import { type ClaimedRun, startRun } from "./claim";
import { answerableAsRecorded, claimAfterPreflight, PREFLIGHT_FIRST } from "./claim-transaction";
import { startedWith, startRunInBackground } from "./executor";
import { type AnswerEntry, knownDecisions, settle } from "./settle";

/*
 * A decision taken on its own (the decision route, bulk, a deadline's expiry): validated and checked like any answer,
 * and — once it is the last one its super-step waits for — the resume run claimed with every staged answer.
 */

export interface DecideRequest {
  threadId: string;
  entry: AnswerEntry;
  principal: Principal;
  /** The id of the resume run, should this answer be the last one its super-step waits for. */
  runId: string;
  leaseMs: number;
  /** How the answer came (its receipt says): default a person's decision, or the system principal's own. */
  channel?: DecisionChannel;
}

/** A decision taken on its own: either the run resumed with it, or it waits for the other decisions named. */
export type DecideResult =
  | ({ resumed: true } & ClaimedRun)
  | { resumed: false; waitingFor: { interruptId: string; action: string }[] };

/**
 * Take one decision of several pending at once (parallel approvals answered card by card, by different people):
 * validated and checked like any answer, recorded as `answered`, and — once it is the last one its super-step waits
 * for — the resume run is claimed with every staged answer in the same transaction. Two answers to one card: one
 * wins, the other hears who decided. Two answers to two cards at once: both win, the second starts the run.
 */
export async function decideOne({
  database,
  ...request
}: DecideRequest & { database: Database }): Promise<DecideResult> {
  if (request.principal.kind === "key") {
    throw new AppError("forbidden:api_key_scope", "An intake key cannot decide; decisions need an operator.");
  }
  const answered = [request.entry.interruptId];
  const { threadId, runId } = request;
  return claimAfterPreflight(database, threadId, runId, answered, async (tx, observer, checked) => {
    const thread = await lockThread({ tx, threadId: request.threadId });
    if (!thread) throw new AppError("not_found:thread", `Thread ${request.threadId} does not exist.`);
    if (!checked && !answerableAsRecorded(thread)) return PREFLIGHT_FIRST;
    const { pending, staged, involved, decided } = await listOpenDecisions({
      db: tx,
      threadId: thread.id,
      involvedOf: thread,
    });
    const known = await knownDecisions(tx, thread, [request.entry], pending);
    const others = pending.filter((d) => d.interruptId !== request.entry.interruptId);
    const read = {
      staged,
      ...(involved ? { involved } : {}),
      ...(decided ? { decided } : {}),
      ...(request.channel ? { channel: request.channel } : {}),
    };
    if (others.length > 0) {
      await settle(tx, thread, known, [request.entry], request.principal, null, read);
      observer.settled(known, [request.entry]);
      return {
        resumed: false as const,
        waitingFor: others.map((d) => ({ interruptId: d.interruptId, action: d.action })),
      };
    }
    const audit: AuditInput[] = [];
    const receipts: NewReceipt[] = [];
    const answers = await settle(tx, thread, known, [request.entry], request.principal, request.runId, {
      ...read,
      audit,
      receipts,
    });
    observer.settled(known, [request.entry]);
    const claimed = await startRun(tx, thread, request.principal, request.runId, answers, request.leaseMs, {
      audit,
      receipts,
    });
    return { resumed: true as const, ...claimed };
  });
}

/**
 * {@link decideOne}, and when the answer completed its super-step, the resume run started in the background: what
 * the decision endpoint answers (`events` is where the run streams from).
 */
export async function decideAndResume(
  request: Omit<DecideRequest, "runId" | "leaseMs"> & { database: Database },
): Promise<
  | { resumed: false; waitingFor: { interruptId: string; action: string }[] }
  | { resumed: true; runId: string; events: string }
> {
  const result = await decideOne({ ...request, runId: randomUUID(), leaseMs: env.RUN_LEASE_MS });
  if (!result.resumed) return { resumed: false, waitingFor: result.waitingFor };
  startRunInBackground({
    database: request.database,
    run: result.run,
    startSeq: result.startSeq,
    options: startedWith(result),
  });
  return {
    resumed: true,
    runId: result.run.id,
    events: `/api/threads/${encodeURIComponent(request.threadId)}/events?after=${result.startSeq}`,
  };
}
