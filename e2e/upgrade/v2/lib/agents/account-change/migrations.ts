import "server-only";
import type { AgentMigration } from "@/lib/runtime/agents/registry";

/**
 * Version 3 of account changes declares a migration that cannot do its job (the upgrade suite's failing migration):
 * a thread paused under version 2 must end up waiting for a supervisor, with the reason in the audit trail.
 */
export const accountChangeMigrations: AgentMigration[] = [
  {
    from: "2",
    description: "reviews regrouped (not derivable from version 2's answers)",
    migrate() {
      throw new Error("version 2's two reviews cannot be mapped onto version 3's");
    },
  },
];
