import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/*
 * The floors of the house (docs/architecture.md), checked on the real import graph of the product files: a module may
 * import its own room and the rooms below it, never one above. `contract` (what the browser may import) imports
 * nothing else in lib/; `platform` only `contract`; `db` and `checkpoint` add `platform`; `shop` and `auth` add `db`;
 * `agui` maps between LangGraph and AG-UI on `contract` alone; `delivery` adds `shop`; `runtime` adds `delivery` and
 * never an agent; `queue` sits on `runtime`; an agent imports anything below and never another agent; the route
 * wrapper and the composition root are on top. `components/` import only `contract/` and `components/`; `app/` never
 * reads `db/queries` (pages read through runtime views); product code never imports tests, benches or scripts.
 *
 * Where today's code breaks a rule, ALLOWED says so with its reason. The list may only shrink: an entry that no longer
 * matches an import fails the test too, so it is removed when its import goes.
 */

const root = resolve(__dirname, "..");

/** Rooms in floor order: each may import the rooms listed for it (and itself). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  contract: [],
  platform: ["contract"],
  db: ["contract", "platform"],
  checkpoint: ["contract", "platform", "db"],
  agui: ["contract", "platform"],
  shop: ["contract", "platform", "db"],
  auth: ["contract", "platform", "db"],
  delivery: ["contract", "platform", "db", "checkpoint", "shop", "auth"],
  runtime: ["contract", "platform", "db", "checkpoint", "agui", "shop", "auth", "delivery"],
  queue: ["contract", "platform", "db", "checkpoint", "agui", "shop", "auth", "delivery", "runtime"],
  kit: ["contract", "platform", "db", "checkpoint", "agui", "shop", "auth", "delivery", "runtime", "queue"],
  agent: [
    "contract",
    "platform",
    "db",
    "checkpoint",
    "agui",
    "shop",
    "auth",
    "delivery",
    "runtime",
    "queue",
    "kit",
  ],
  registration: ["runtime", "kit", "agent"],
  top: ["*"],
  components: ["contract"],
  app: ["*"],
};

/** Which room a product file is in (null: not a product file this test governs). */
function roomOf(file: string): string | null {
  if (file.startsWith("components/")) return "components";
  if (file.startsWith("app/")) return "app";
  if (file === "lib/http/route.ts" || file === "lib/server-start.ts" || file === "lib/server-boot.ts")
    return "top";
  if (file === "lib/agents/index.ts") return "registration";
  if (file.startsWith("lib/agents/kit/")) return "kit";
  if (file.startsWith("lib/agents/")) return "agent";
  const m = file.match(/^lib\/([^/]+)\//);
  return m?.[1] && m[1] in MAY_IMPORT ? m[1] : null;
}

/** The agent folder of a file under lib/agents (null for the kit and the registration). */
function agentOf(file: string): string | null {
  const m = file.match(/^lib\/agents\/([^/]+)\//);
  return m?.[1] && m[1] !== "kit" ? m[1] : null;
}

/**
 * Today's exceptions: `importer → imported module` and why. Only shrinks. (An entry names the importing file and the
 * module imported, both as paths from the repository root without extension.)
 */
const ALLOWED: Record<string, string> = {};

function productFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return productFiles(path);
    return /\.(ts|tsx)$/.test(name) && !/\.(test|conformance)\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Every module a file imports (static, dynamic, type-only and re-exports), as paths from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1] ?? "");
  return specs
    .filter((s) => s.startsWith("@/") || s.startsWith("."))
    .map((s) => (s.startsWith("@/") ? s.slice(2) : relative(root, resolve(dirname(file), s))))
    .map((s) => s.replace(/\.(ts|tsx|mjs|js)$/, "").replace(/\/index$/, ""));
}

/** The room a module path (no extension) lives in, resolving a folder import to its index. */
function roomOfModule(path: string): string | null {
  for (const candidate of [`${path}.ts`, `${path}.tsx`, `${path}/index.ts`, `${path}/index.tsx`]) {
    const room = roomOf(candidate);
    if (room) return room;
  }
  if (path.startsWith("e2e/") || path.startsWith("scripts/")) return "tests-and-scripts";
  return null;
}

/** Every import that breaks a floor, as `importer → module: rule`. */
function floorViolations(): Map<string, string> {
  const out = new Map<string, string>();
  const files = ["lib", "app", "components"].flatMap((d) => productFiles(join(root, d)));
  for (const abs of files) {
    const file = relative(root, abs);
    const room = roomOf(file);
    if (!room) continue;
    for (const target of importsOf(abs)) {
      const key = `${file.replace(/\.(ts|tsx)$/, "")} → ${target}`;
      const to = roomOfModule(target);
      if (to === "tests-and-scripts") {
        out.set(key, "product code imports tests, benches or scripts");
        continue;
      }
      if (room === "app" && target.startsWith("lib/db/queries")) {
        out.set(key, "app reads db/queries (pages read through runtime views)");
        continue;
      }
      if (!to || to === room) {
        if (room === "agent" && to === "agent" && agentOf(file) !== agentOf(`${target}.ts`)) {
          out.set(key, "an agent imports another agent");
        }
        continue;
      }
      const allowed = MAY_IMPORT[room] ?? [];
      if (allowed.includes("*")) continue;
      if (!allowed.includes(to)) out.set(key, `${room} imports ${to} (a floor above, or beside)`);
    }
  }
  return out;
}

describe("the floors of lib/, app/ and components/", () => {
  it("every room has product files and every file of lib/ has a room", () => {
    const files = productFiles(join(root, "lib")).map((f) => relative(root, f));
    const homeless = files.filter((f) => roomOf(f) === null);
    expect(homeless).toEqual([]);
    for (const room of Object.keys(MAY_IMPORT)) {
      if (room === "top") continue;
      const dirFiles = [
        ...files,
        ...productFiles(join(root, "app")),
        ...productFiles(join(root, "components")),
      ];
      expect(
        dirFiles.some(
          (f) =>
            roomOf(relative(root, f).startsWith("lib/") ? relative(root, f) : relative(root, f)) === room,
        ),
        room,
      ).toBe(true);
    }
  });

  it("no import runs up a floor, beside one, from an agent to another, or into tests — beyond the allow-list", () => {
    const found = floorViolations();
    const unexpected = [...found]
      .filter(([key]) => !(key in ALLOWED))
      .map(([key, rule]) => `${key}: ${rule}`);
    expect(unexpected).toEqual([]);
  });

  it("the allow-list only shrinks: every entry still names an import that breaks a floor", () => {
    const found = floorViolations();
    expect(Object.keys(ALLOWED).filter((key) => !found.has(key))).toEqual([]);
  });
});
