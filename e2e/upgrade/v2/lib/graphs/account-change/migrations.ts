import "server-only";
import type { AgentMigration } from "@/lib/runtime/agent";

/**
 * Version 2 of account changes declares a migration that cannot do its job (the upgrade suite's failing migration):
 * a thread paused under version 1 must end up waiting for a supervisor, with the reason in the audit trail.
 */
export const accountChangeMigrations: AgentMigration[] = [
  {
    from: "1",
    description: "reviews regrouped (not derivable from version 1's answers)",
    migrate() {
      throw new Error("version 1's two reviews cannot be mapped onto version 2's");
    },
  },
];
