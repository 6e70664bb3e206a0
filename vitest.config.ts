import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { writeAgentRegistry } from "./scripts/agents-registry.mjs";

const root = fileURLToPath(new URL(".", import.meta.url));
// The agent packages agents.config.json lists, registered as the server registers them.
writeAgentRegistry(root);
const shared = {
  globals: true,
  environment: "node" as const,
  // Library code marks itself `server-only`; tests run on the server, so resolve the marker to its empty build.
  alias: {
    "server-only": `${root}node_modules/server-only/empty.js`,
    "@hitl/agent-kit": `${root}lib/agents/kit/index.ts`,
    "@/": root,
  },
};

// One receipt key for the whole run: test files, the servers they start and the commands they run sign and verify alike.
process.env.RECEIPT_KEYS ??= `test:${randomBytes(24).toString("hex")}`;
// One master key and one index key for the whole run too: test files and their servers seal and open alike.
process.env.DATA_MASTER_KEY ??= `test:${randomBytes(32).toString("base64")}`;
process.env.DATA_INDEX_KEY ??= randomBytes(32).toString("base64");

export default defineConfig({
  resolve: {
    alias: {
      "server-only": `${root}node_modules/server-only/empty.js`,
      "@hitl/agent-kit": `${root}lib/agents/kit/index.ts`,
      "@": root,
    },
  },
  test: {
    // Two test files at a time even on two cores: an integration file mostly waits on its own `next start` and
    // database (measured: the whole run 724 s with two, 1,057–1,206 s with one, on this 2-core machine).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          ...shared,
          name: "unit",
          include: ["lib/**/*.test.ts", "components/**/*.test.ts", "examples/**/*.test.ts"],
          exclude: ["**/*.int.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          ...shared,
          name: "int",
          include: ["lib/**/*.int.test.ts", "e2e/**/*.int.test.ts", "examples/**/*.int.test.ts"],
          // Runtime functions called directly find the app's agents registered, as in the server.
          setupFiles: ["lib/agents/index.ts"],
          hookTimeout: 120_000,
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          ...shared,
          name: "conformance",
          include: ["lib/checkpoint/conformance/*.conformance.ts"],
          hookTimeout: 120_000,
          testTimeout: 60_000,
        },
      },
    ],
  },
});
