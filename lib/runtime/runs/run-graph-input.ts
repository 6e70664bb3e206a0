import "server-only";
import type { BaseMessage } from "@langchain/core/messages";
import { resumeToCommand } from "@/lib/agui";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import type { AppDb } from "@/lib/db/client";
import { listThreadDecisions } from "@/lib/db/queries/decisions";
import { getThread } from "@/lib/db/queries/threads";
import type { Run } from "@/lib/db/schema";
import type { AgentDefinition, AgentGraph } from "../agents/registry";
import type { RunContextRead } from "./budget";
import { ticketOf } from "./intake";
import type { RunInput } from "./run-input";

/**
 * What to invoke the graph with for a run, and extra `configurable` keys. A fresh run sends its input. A recovered
 * run continues from the last checkpoint (`null`), unless its input never reached the graph before the crash — then
 * it sends it again: a resume whose interrupts are still pending, or a new message that is not in the state yet.
 */
export async function graphInputFor({
  db,
  run,
  agent,
  graph,
  recovered,
  known = {},
}: {
  db: AppDb;
  run: Run;
  agent: AgentDefinition;
  graph: AgentGraph;
  recovered: boolean;
  /** What the run's start already read of its thread (`loadThreadSpending`): not read again. */
  known?: RunContextRead;
}): Promise<{ input: unknown; configurable: Record<string, unknown> }> {
  const input = run.input as RunInput;
  const asked = input.kind === "resume" ? await askedQuestions(db, run.threadId, known.asked) : {};
  const configurable: Record<string, unknown> =
    input.kind === "resume"
      ? { operator_id: input.actor, ...asked }
      : input.kind === "fork" || input.kind === "migration"
        ? { checkpoint_id: input.forkCheckpointId }
        : input.kind === "input" && input.fromCheckpointId
          ? { checkpoint_id: input.fromCheckpointId }
          : {};
  if (recovered) {
    const state = await graph.getState({ configurable: { thread_id: run.threadId } });
    if (input.kind === "resume") {
      const pending = new Set(state.tasks.flatMap((t) => t.interrupts ?? []).map((i) => i.id));
      const notApplied = input.resume.some((r) => pending.has(r.interruptId));
      return {
        input: notApplied ? resumeToCommand(input.resume) : null,
        configurable: { operator_id: input.actor, ...asked },
      };
    }
    if (input.kind === "input") {
      const messages = ((state.values as { messages?: BaseMessage[] }).messages ?? []).map((m) => m.id);
      if (!messages.includes(input.messageId))
        return { input: await freshInput(db, agent, run, input, known), configurable };
    }
    return { input: null, configurable: {} };
  }
  if (input.kind === "resume") return { input: resumeToCommand(input.resume), configurable };
  if (input.kind === "input") return { input: await freshInput(db, agent, run, input, known), configurable };
  return { input: null, configurable };
}

/**
 * The questions this thread's ledger recorded, as canonical payloads: a resumed step must ask one of them again to be
 * given its answer (`expected_interrupts`, read by lib/agents/kit/ask-human.ts). A graph changed under a paused thread
 * (a careless deploy) asks something else, and the run stops before acting on an answer to another question.
 */
async function askedQuestions(
  db: AppDb,
  threadId: string,
  known: unknown[] | undefined,
): Promise<{ expected_interrupts: string[] }> {
  const payloads = known ?? (await listThreadDecisions({ db, threadId })).map((d) => d.payload);
  return { expected_interrupts: [...new Set(payloads.map((p) => canonicalPayload(p)))] };
}

async function freshInput(
  db: AppDb,
  agent: AgentDefinition,
  run: Run,
  input: Extract<RunInput, { kind: "input" }>,
  known: RunContextRead,
) {
  const thread = known.thread !== undefined ? known.thread : await getThread({ db, threadId: run.threadId });
  const ticket = thread ? ticketOf(thread) : { message: input.text };
  return agent.input({ messageId: input.messageId, text: input.text, ticket });
}
