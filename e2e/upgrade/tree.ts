import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { writeAgentRegistry } from "../../scripts/agents-registry.mjs";
import { followGuide } from "../guide/tree";

/*
 * The second tree of the upgrade suite: this repository as a team would deploy its next version. It is made the way a
 * developer makes it — copy the current refund definition into `lib/agents/refund/versions/v1/`, then change the
 * graph: rename a node (human_review → review_refund), add a node after the approval (note_approval), add a state
 * field with a default (priority), change a prompt, bump the version and declare a migration; retire goodwill 1
 * (renamed node, no migration, not kept); account change 2 declares a migration that fails. The changes are edits of the current files (each must still apply — a
 * refactor that moves them fails here, loudly) plus the new files under e2e/upgrade/v2/. Then `next build` there.
 */

const ROOT = process.cwd();
const OVERLAY = join(ROOT, "e2e", "upgrade", "v2");

interface Edit {
  file: string;
  find: string;
  replace: string;
  /** Replace every occurrence (default: exactly one must exist). */
  all?: boolean;
}

const EDITS: Edit[] = [
  // The refund graph: renamed node, a node added after the approval.
  { file: "lib/agents/refund/graph.ts", find: '"human_review"', replace: '"review_refund"', all: true },
  {
    file: "lib/agents/refund/graph.ts",
    find: '"review_refund", // interrupt: refund_approval\n',
    replace: '"review_refund", // interrupt: refund_approval\n  "note_approval",\n',
  },
  {
    file: "lib/agents/refund/graph.ts",
    find: '.addNode("choose_method", chooseMethodNode())',
    replace:
      '.addNode("note_approval", noteApprovalNode())\n    .addNode("choose_method", chooseMethodNode())',
  },
  {
    file: "lib/agents/refund/graph.ts",
    find: '(s) => (s.decision?.decision === "reject" ? "write_reply" : "choose_method"),\n      ["write_reply", "choose_method"],',
    replace:
      '(s) => (s.decision?.decision === "reject" ? "write_reply" : "note_approval"),\n      ["write_reply", "note_approval"],',
  },
  {
    file: "lib/agents/refund/graph.ts",
    find: '.addEdge("choose_method", "execute_refund")',
    replace: '.addEdge("note_approval", "choose_method")\n    .addEdge("choose_method", "execute_refund")',
  },
  {
    file: "lib/agents/refund/graph.ts",
    find: 'import { writeReplyNode } from "./nodes/reply";',
    replace:
      'import { noteApprovalNode } from "./nodes/note-approval";\nimport { writeReplyNode } from "./nodes/reply";',
  },
  // A new state field with a default.
  {
    file: "lib/agents/refund/state.ts",
    find: "  editedBy: lastValue<string | null>(() => null),\n});",
    replace:
      '  editedBy: lastValue<string | null>(() => null),\n  /** New in version 2: how urgently the payment team handles it. */\n  priority: lastValue<"normal" | "high">(() => "normal"),\n});',
  },
  // A changed prompt.
  {
    file: "lib/agents/refund/prompts.ts",
    find: "You triage messages sent to an online shop's customer service.",
    replace: "You triage messages sent to an online shop's customer service team, carefully and politely.",
  },
  // The definition: version 2, its interrupt points, its migration.
  {
    file: "lib/agents/refund/agent.ts",
    find: 'version: "1",',
    replace: 'version: "2",\n  migrations: refundMigrations,',
  },
  { file: "lib/agents/refund/agent.ts", find: '"human_review"', replace: '"review_refund"' },
  {
    file: "lib/agents/refund/agent.ts",
    find: 'import { getChatModel } from "./chat-model";',
    replace: 'import { getChatModel } from "./chat-model";\nimport { refundMigrations } from "./migrations";',
  },
  // Account change 3: a declared migration that fails (version 2 not kept).
  {
    file: "lib/agents/account-change/agent.ts",
    find: 'version: "2",',
    replace: 'version: "3",\n  migrations: accountChangeMigrations,',
  },
  {
    file: "lib/agents/account-change/agent.ts",
    find: 'import { accountChangeInput, buildAccountChangeGraph, buildAccountChangeGraphV1 } from "./graph";',
    replace:
      'import { accountChangeInput, buildAccountChangeGraph, buildAccountChangeGraphV1 } from "./graph";\nimport { accountChangeMigrations } from "./migrations";',
  },
  // Goodwill 2: its question node renamed, version 1 retired with no migration.
  { file: "lib/agents/goodwill/graph.ts", find: '"ask"', replace: '"ask_person"', all: true },
  { file: "lib/agents/goodwill/agent.ts", find: 'version: "1",', replace: 'version: "2",' },
  { file: "lib/agents/goodwill/agent.ts", find: '"ask"', replace: '"ask_person"' },
];

/**
 * Apply one edit. Whitespace inside `find` matches any run of whitespace (a reformatted file — e.g. a chain re-indented
 * by the formatter — still takes the deploy's edit); everything else must match exactly.
 */
function edit(tree: string, { file, find, replace, all }: Edit): void {
  const path = join(tree, file);
  const text = readFileSync(path, "utf8");
  const literal = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // Leading and trailing whitespace stay exact (they are part of the lines the replacement writes back).
  const [, lead = "", core = "", trail = ""] = /^(\s*)([\s\S]*?)(\s*)$/.exec(find) ?? [];
  const pattern = literal(lead) + core.split(/\s+/).map(literal).join("\\s+") + literal(trail);
  const matcher = new RegExp(pattern, "g");
  const count = [...text.matchAll(matcher)].length;
  if (count === 0 || (!all && count > 1)) {
    throw new Error(
      `upgrade tree: ${file} has ${count} × ${JSON.stringify(find)} (the v2 edit no longer applies)`,
    );
  }
  writeFileSync(
    path,
    text.replace(matcher, () => replace),
  );
}

/**
 * Keep the current definition as version 1: graph, state and agent copied (with `nodes`, its node code too: a change
 * to a node that version 1 must not see), their relative imports re-pointed.
 */
function keepVersionOne(tree: string, { nodes = false }: { nodes?: boolean } = {}): void {
  const from = join(tree, "lib/agents/refund");
  const to = join(from, "versions/v1");
  mkdirSync(join(to, "nodes"), { recursive: true });
  const own = new Set(["./agent", "./graph", "./state"]);
  const repoint = (text: string, keep: (spec: string) => boolean, up: string) =>
    text.replace(/from "(\.\.?\/[^"]+)"/g, (whole, spec: string) => {
      if (keep(spec)) return whole;
      return `from "${spec.startsWith("./") ? `${up}${spec.slice(2)}` : `${up}${spec}`}"`;
    });
  for (const name of ["agent.ts", "graph.ts", "state.ts"]) {
    const text = readFileSync(join(from, name), "utf8");
    const keep = (spec: string) => own.has(spec) || (nodes && spec.startsWith("./nodes/"));
    writeFileSync(join(to, name), repoint(text, keep, "../../"));
  }
  if (!nodes) return;
  for (const name of readdirSync(join(from, "nodes")).filter((n) => n.endsWith(".ts"))) {
    const text = readFileSync(join(from, "nodes", name), "utf8");
    // Siblings and version 1's own state stay; the rest of the agent is shared (two levels further up).
    const keep = (spec: string) => spec.startsWith("./") || spec === "../state";
    writeFileSync(join(to, "nodes", name), repoint(text, keep, "../../"));
  }
}

/** Write each named definition's structure hash into it (what its structure test would ask for). */
function declareHashes(
  tree: string,
  agents: [id: string, version: string][] = [
    ["refund", "2"],
    ["goodwill", "2"],
  ],
): void {
  const script = [
    'import "@/lib/agents/index";',
    'import { getAgent } from "@/lib/runtime/agents/registry";',
    'import { structureHash } from "@/lib/runtime/agents/graph-structure";',
    `const agents = ${JSON.stringify(agents)};`,
    "const out = {};",
    "for (const [id, version] of agents) out[id] = await structureHash(getAgent(id, version));",
    "console.log(JSON.stringify(out));",
  ].join("\n");
  writeFileSync(join(tree, "upgrade-hashes.mts"), script);
  const result = spawnSync(
    join(tree, "node_modules/.bin/tsx"),
    ["--conditions=react-server", "upgrade-hashes.mts"],
    { cwd: tree, encoding: "utf8", env: { ...process.env, DATABASE_URL: "" } },
  );
  rmSync(join(tree, "upgrade-hashes.mts"));
  if (result.status !== 0)
    throw new Error(`upgrade tree: hashing failed\n${result.stdout}\n${result.stderr}`);
  const line = result.stdout.trim().split("\n").at(-1) ?? "{}";
  const hashes = JSON.parse(line) as Record<string, string>;
  for (const [agent, hash] of Object.entries(hashes)) {
    const file = join(tree, `lib/agents/${agent}/agent.ts`);
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(/structureHash: "sha256:[0-9a-f]+"/, `structureHash: "${hash}"`),
    );
  }
}

/**
 * Make the v2 tree (a copy of this repository's files with node_modules hard-linked — Turbopack refuses a symlinked
 * one), apply the deploy, and build it. Returns its directory; `remove()` deletes it.
 */
export function buildUpgradeTree(log: (line: string) => void = console.log): { dir: string; remove(): void } {
  return buildTree({
    name: "v2",
    reuse: process.env.UPGRADE_V2_DIR,
    log,
    prepare(dir) {
      cpSync(OVERLAY, dir, { recursive: true });
      keepVersionOne(dir);
      for (const e of EDITS) edit(dir, e);
      // A team's own agents arrive with this deploy, added exactly as the README's guide says (e2e/guide/).
      followGuide(dir);
      declareHashes(dir);
    },
  });
}

/**
 * The careless deploy: the refund agent's state field `requested` (the amount the approval asks about) renamed to
 * `requestedAmount` in the state and every node that reads or writes it, and a node added to the goodwill agent — and
 * nothing else: no version bump, the declared structure hashes left as they were. A paused thread's state still has `requested`; this graph reads
 * `requestedAmount`, finds nothing, and would ask (and pay) the order's total instead of the amount approved.
 */
const RENAME_REQUESTED: Edit[] = [
  {
    file: "lib/agents/refund/state.ts",
    find: "  requested: lastValue<",
    replace: "  requestedAmount: lastValue<",
  },
  {
    file: "lib/agents/refund/nodes/decide.ts",
    find: "state.requested ??",
    replace: "state.requestedAmount ??",
    all: true,
  },
  {
    file: "lib/agents/refund/nodes/decide.ts",
    find: "return { requested: requestedCents,",
    replace: "return { requestedAmount: requestedCents,",
  },
  {
    file: "lib/agents/refund/nodes/intake.ts",
    find: "requested: classification.requestedCents",
    replace: "requestedAmount: classification.requestedCents",
  },
  {
    file: "lib/agents/refund/nodes/reply.ts",
    find: "money(state.requested)",
    replace: "money(state.requestedAmount)",
  },
  {
    file: "lib/agents/refund/fork-rules.ts",
    find: "    requested: editableCents.meta({",
    replace: "    requestedAmount: editableCents.meta({",
  },
];

/** A node added in place to the goodwill agent, before its question: no bump either. */
const GOODWILL_NODE_ADDED: Edit[] = [
  {
    file: "lib/agents/goodwill/graph.ts",
    find: '.addEdge(START, "propose")',
    replace:
      '.addNode("screen", (s: State) => ({ voucherCents: Math.min(s.voucherCents, 2500) }))\n    .addEdge(START, "propose")',
  },
  {
    file: "lib/agents/goodwill/graph.ts",
    find: '.addEdge("propose", "ask")',
    replace: '.addEdge("propose", "screen")\n    .addEdge("screen", "ask")',
  },
];

const CARELESS_EDITS: Edit[] = [...RENAME_REQUESTED, ...GOODWILL_NODE_ADDED];

/** Build the careless deploy's tree (see CARELESS_EDITS). */
export function buildCarelessTree(log: (line: string) => void = console.log): {
  dir: string;
  remove(): void;
} {
  return buildTree({
    name: "careless",
    reuse: process.env.UPGRADE_CARELESS_DIR,
    log,
    buildEnv: { NEXT_BUILD_SKIP_TYPECHECK: "1" },
    prepare(dir) {
      for (const e of CARELESS_EDITS) edit(dir, e);
      // The careless build ships without its tests (they would no longer compile: that is the point), and is not
      // type-checked (`buildEnv`).
      for (const file of execFileSync("git", ["ls-files", "-z", "*.test.ts", "*.spec.ts"], {
        cwd: ROOT,
        encoding: "utf8",
      })
        .split("\0")
        .filter(Boolean))
        rmSync(join(dir, file), { force: true });
    },
  });
}

/** Version 2 of the refund agent with version 1 kept and registered beside it (the README's procedure, no migration). */
const BUMP_KEEPING_V1: Edit[] = [
  { file: "lib/agents/refund/agent.ts", find: 'version: "1",', replace: 'version: "2",' },
  {
    file: "lib/agents/index.ts",
    find: 'import { refundAgent } from "@/lib/agents/refund/agent";',
    replace:
      'import { refundAgent } from "@/lib/agents/refund/agent";\nimport { refundAgent as refundAgentV1 } from "@/lib/agents/refund/versions/v1/agent";',
  },
  {
    file: "lib/agents/index.ts",
    find: "registerAgent(refundAgent);",
    replace: "registerAgent(refundAgentV1);\nregisterAgent(refundAgent);",
  },
];

/** A candidate build of the deploy shadow: the change, and how the refund agent's version is handled. */
export type ShadowCandidate =
  | "careless_rename"
  | "add_node"
  | "rename_field"
  | "rename_with_migration"
  | "auto_approve_limit"
  | "refund_cap"
  | "store_credit";

const CANDIDATES: Record<
  ShadowCandidate,
  { edits: Edit[]; keepV1: boolean | "with_nodes"; files?: Record<string, string> }
> = {
  // The procedure: a node added after the approval (and the state field it sets), version 2, version 1 kept.
  add_node: {
    keepV1: true,
    edits: [
      {
        file: "lib/agents/refund/graph.ts",
        find: '"human_review", // interrupt: refund_approval\n',
        replace: '"human_review", // interrupt: refund_approval\n  "note_approval",\n',
      },
      ...EDITS.filter(
        (e) =>
          /note_approval|noteApprovalNode|priority/.test(e.replace) &&
          e.file !== "lib/agents/refund/agent.ts" &&
          !e.find.includes("interrupt: refund_approval"),
      ),
      ...BUMP_KEEPING_V1,
    ],
  },
  // The procedure: a state field renamed, version 2, version 1 kept.
  rename_field: { keepV1: "with_nodes", edits: [...RENAME_REQUESTED, ...BUMP_KEEPING_V1] },
  // The procedure: the rename with its migration (version 1 retired: its threads move onto version 2).
  rename_with_migration: {
    keepV1: false,
    edits: [
      ...RENAME_REQUESTED,
      {
        file: "lib/agents/refund/agent.ts",
        find: 'version: "1",',
        replace: 'version: "2",\n  migrations: refundMigrations,',
      },
      {
        file: "lib/agents/refund/agent.ts",
        find: 'import { getChatModel } from "./chat-model";',
        replace:
          'import { getChatModel } from "./chat-model";\nimport { refundMigrations } from "./migrations";',
      },
    ],
    files: {
      "lib/agents/refund/migrations.ts": [
        'import "server-only";',
        'import type { AgentMigration } from "@/lib/runtime/agents/registry";',
        "",
        "/** Version 1 kept the amount asked about in `requested`; version 2 calls it `requestedAmount`. */",
        "export const refundMigrations: AgentMigration[] = [",
        "  {",
        '    from: "1",',
        '    description: "requested renamed requestedAmount",',
        "    migrate({ values, pendingNodes }) {",
        '      if (!pendingNodes.includes("human_review")) return null;',
        '      return { values: { requestedAmount: values.requested ?? null }, asNode: "check_policy" };',
        "    },",
        "  },",
        "];",
        "",
      ].join("\n"),
    },
  },
  // The careless rename: no bump, so version 1 is refused (its graph is not what it declares).
  careless_rename: { keepV1: false, edits: RENAME_REQUESTED },
  // In place (no version bump: the graph is the same): a policy threshold that applies before the approval only.
  auto_approve_limit: {
    keepV1: false,
    edits: [
      {
        file: "lib/agents/refund/policy.ts",
        find: "export const AUTO_APPROVE_LIMIT_CENTS = 5000;",
        replace: "export const AUTO_APPROVE_LIMIT_CENTS = 15000;",
      },
    ],
  },
  // In place: a cap of €100 on every refund, after the approval (the approved €120 would pay €100).
  refund_cap: {
    keepV1: false,
    edits: [
      {
        file: "lib/agents/refund/nodes/act.ts",
        find: "const amountCents = Math.min(decision.amountCents, order.amountCents);",
        replace: "const amountCents = Math.min(decision.amountCents, order.amountCents, 10_000);",
      },
    ],
  },
  // In place: card refunds become store credit (the same money, another effect).
  store_credit: {
    keepV1: false,
    edits: [
      {
        file: "lib/agents/refund/nodes/decide.ts",
        find: 'if (!ASK_FOR_METHOD.has(order.paymentMethod)) return { refundMethod: "original_payment" };',
        replace: 'if (!ASK_FOR_METHOD.has(order.paymentMethod)) return { refundMethod: "store_credit" };',
      },
    ],
  },
};

/**
 * A candidate build for the deploy shadow: this repository with one change, as source only (the shadow runs with
 * tsx: no `next build`). A version bump declares version 2's structure hash, as its structure test would ask.
 */
export function shadowCandidateTree(name: ShadowCandidate): { dir: string; remove(): void } {
  const candidate = CANDIDATES[name];
  return buildTree({
    name: `shadow-${name}`,
    reuse: undefined,
    log: () => {},
    build: false,
    prepare(dir) {
      if (candidate.keepV1) keepVersionOne(dir, { nodes: candidate.keepV1 === "with_nodes" });
      for (const [file, text] of Object.entries(candidate.files ?? {})) writeFileSync(join(dir, file), text);
      if (name === "add_node")
        cpSync(
          join(OVERLAY, "lib/agents/refund/nodes/note-approval.ts"),
          join(dir, "lib/agents/refund/nodes/note-approval.ts"),
        );
      for (const e of candidate.edits) edit(dir, e);
      if (candidate.edits.some((e) => e.replace.includes('version: "2"')))
        declareHashes(dir, [["refund", "2"]]);
    },
  });
}

/**
 * Give a tree about to be built a copy of this checkout's build cache (Turbopack's, in `<distDir>/cache`): only what
 * the tree changed is compiled again (measured: 24 s and 33 s of CPU instead of 63 s and 110 s for a one-file change).
 * A copy, never links: the build writes to it. Nothing when this checkout has not been built.
 */
export function seedBuildCache(dir: string): void {
  const cache = join(ROOT, process.env.NEXT_DIST_DIR || ".next", "cache");
  if (!existsSync(cache) || existsSync(join(dir, ".next", "cache"))) return;
  mkdirSync(join(dir, ".next"), { recursive: true });
  execFileSync("cp", ["-a", "--reflink=auto", cache, join(dir, ".next", "cache")]);
}

/** Copy this repository into a new directory, let `prepare` change it, and `next build` there. */
function buildTree({
  name,
  reuse,
  log,
  prepare,
  buildEnv = {},
  build = true,
}: {
  name: string;
  /** False: the tree's source only (a script run with tsx needs no build). */
  build?: boolean;
  /** Extra environment of its `next build`. */
  buildEnv?: Record<string, string>;
  /** While working on a suite: reuse a tree built before (it is kept when this is set). */
  reuse: string | undefined;
  log: (line: string) => void;
  prepare(dir: string): void;
}): { dir: string; remove(): void } {
  if (reuse && build && existsSync(join(reuse, ".next", "BUILD_ID"))) return { dir: reuse, remove: () => {} };
  const dir = reuse ?? join(tmpdir(), `hitl-upgrade-${name}-${process.pid}-${Date.now()}`);
  rmSync(dir, { recursive: true, force: true });
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], {
    cwd: ROOT,
    encoding: "utf8",
  })
    .split("\0")
    .filter((f) => f && !f.startsWith("e2e/upgrade/v2/") && existsSync(join(ROOT, f)));
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  execFileSync("cp", ["-al", join(ROOT, "node_modules"), join(dir, "node_modules")]);
  // The agent packages' registry is generated, not committed (npm install makes it; a copy must too).
  writeAgentRegistry(dir);
  prepare(dir);
  if (!build) return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
  log(`[upgrade] ${name} tree at ${dir}: building…`);
  const started = Date.now();
  seedBuildCache(dir);
  const built = spawnSync(join(dir, "node_modules/.bin/next"), ["build"], {
    cwd: dir,
    encoding: "utf8",
    // Type-checked: the build is the only check of e2e/upgrade/v2's files in place (the root tsconfig leaves them out).
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NEXT_DIST_DIR: "", ...buildEnv },
  });
  if (built.status !== 0) {
    throw new Error(
      `upgrade tree: ${name}: next build failed\n${built.stdout.slice(-4000)}\n${built.stderr.slice(-4000)}`,
    );
  }
  log(`[upgrade] ${name} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
