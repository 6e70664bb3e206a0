import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/client";
import { getDecisions } from "@/lib/db/queries/decisions";
import { getThread } from "@/lib/db/queries/threads";
import { getAgentGraph, threadAgent } from "../agents/registry";
import { type ForkResult, forkThread } from "./fork";

/**
 * "Answer differently": branch the thread from the checkpoint where a decision already taken was asked, so the
 * question is asked again on the branch, to be answered otherwise — through the claim, the contract and four-eyes like
 * any decision (the person who branches started the branch's run: they may not approve what it asks). The branch
 * records which decision it answers otherwise and where the line that answered it had got to, so the thread page can
 * set the two outcomes side by side. Effects the first answer recorded keep their course: a branch cannot undo them.
 */
export async function answerDifferently({
  database,
  threadId,
  interruptId,
  by,
}: {
  database: Database;
  threadId: string;
  interruptId: string;
  by: Principal;
}): Promise<ForkResult> {
  const { db } = database;
  const [decision] = await getDecisions({ db, interruptIds: [interruptId] });
  if (!decision || decision.threadId !== threadId) {
    throw new AppError("not_found:interrupt", `Decision ${interruptId} is not in this thread.`);
  }
  if (decision.status !== "resolved" || decision.resumeStatus === "cancelled") {
    throw new AppError(
      "conflict:decision_not_taken",
      "Only a decision that was answered can be answered differently: this one is still open, was cancelled or no longer applies.",
      { interruptId, status: decision.status },
    );
  }
  const thread = await getThread({ db, threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  const graph = await getAgentGraph(threadAgent(thread));
  const head = await graph.getState({ configurable: { thread_id: threadId } });
  const otherHead = (head.config?.configurable?.checkpoint_id as string | undefined) ?? null;
  return forkThread({
    database,
    threadId,
    by,
    checkpointId: decision.checkpointId,
    answerDifferently: { interruptId, otherHead },
  });
}
