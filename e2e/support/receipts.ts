import { randomUUID } from "node:crypto";
import type { Authorization } from "@/lib/contract/wire";
import type { Queryable } from "@/lib/db/tx";
import { recordDecisionReceipts } from "@/lib/delivery/receipts";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";
import { authorizationsOf } from "@/lib/runtime/runs/settle";
import { type RecordRefundResult, recordRefund } from "@/lib/shop/refunds";

/*
 * Tests that act below the ledger (a query, the dispatcher) record the decision that authorizes what they do, as the
 * ledger does when a person decides: a signed receipt through the real receipts module, never a bypass of the check.
 */

/** A supervisor's receipt on `threadId` authorizing `authorizes` (one decision, answered through the console). */
export async function recordApproval({
  db,
  threadId,
  authorizes,
  by = { id: "u-test-supervisor", label: "supervisor@test.local" },
}: {
  db: Queryable;
  threadId: string;
  authorizes: Authorization[];
  by?: { id: string; label: string };
}): Promise<string> {
  const interruptId = `test-${randomUUID()}`;
  await recordDecisionReceipts({
    db,
    principal: { ...by, role: "supervisor", kind: "user" },
    channel: "decision",
    policy: "test@1",
    decisions: [
      {
        interruptId,
        threadId,
        action: "refund_approval",
        payload: { authorizes },
        status: "resolved",
        answer: { decision: "approve" },
        authorizes,
      },
    ],
  });
  return interruptId;
}

/** `recordRefund` after a person approved exactly that refund on its thread. */
export async function recordApprovedRefund(
  args: Omit<Parameters<typeof recordRefund>[0], "db"> & { db: Queryable },
): Promise<RecordRefundResult> {
  await recordApproval({
    db: args.db,
    threadId: args.threadId,
    authorizes: [{ effect: "refund", orderId: args.orderId, amountCents: args.amountCents }],
  });
  return recordRefund(args);
}

/**
 * The receipts the ledger writes when a person answers `interrupts` with `answers` (tests that resume a graph
 * directly, below the ledger): each answer's authorizations as the agent's definition declares them.
 */
export async function recordAnswers({
  db,
  agent,
  threadId,
  answers,
}: {
  db: Queryable;
  agent: AgentDefinition;
  threadId: string;
  /** Interrupt id → [raw interrupt value, answer]. */
  answers: Record<string, [unknown, unknown]>;
}): Promise<void> {
  await recordDecisionReceipts({
    db,
    principal: { id: "u-test-supervisor", label: "supervisor@test.local", role: "supervisor", kind: "user" },
    channel: "decision",
    policy: `${agent.id}@${agent.version}`,
    decisions: Object.entries(answers).map(([interruptId, [raw, answer]]) => {
      const parsed = agent.interrupts.parse(raw);
      return {
        interruptId,
        threadId,
        action: parsed.ok ? parsed.action : "unknown",
        payload: parsed.ok ? parsed.payload : raw,
        status: "resolved" as const,
        answer,
        authorizes: parsed.ok ? authorizationsOf(agent, parsed.payload, answer) : [],
      };
    }),
  });
}
