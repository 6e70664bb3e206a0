import "server-only";
import type { AgentMigration } from "@/lib/runtime/agents/registry";

/**
 * How threads paused under version 1 move onto version 2. Only a thread waiting at the approval moves: that node is
 * renamed (`human_review` → `review_refund`), so it continues as `check_policy` and version 2 asks the approval again
 * under its new name. Threads waiting anywhere else stay pinned to version 1 and finish there.
 */
export const refundMigrations: AgentMigration[] = [
  {
    from: "1",
    description:
      "human_review renamed review_refund; note_approval added after it; priority added (default normal)",
    migrate({ values, pendingNodes }) {
      if (!pendingNodes.includes("human_review")) return null;
      if (!values.order || !values.policy)
        throw new Error("a thread at human_review without an order or a policy");
      return { values: { priority: "normal" }, asNode: "check_policy" };
    },
  },
];
