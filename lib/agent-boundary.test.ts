import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/*
 * The runtime is generic: nothing under lib/runtime, lib/agui, lib/db, lib/checkpoint, lib/shop or lib/delivery imports
 * an agent (its folder under lib/agents, the kit, or the registration lib/agents/index.ts), and none of them reads the
 * app's question kinds (lib/contract/questions) either: agents hand their contract to them through their definition.
 * (lib/floors.test.ts checks the floors; this is the stricter rule for the generic layers.) Checked on the real
 * import graph of the product files (tests may import anything).
 */
const root = resolve(__dirname, "..");
const GENERIC = ["lib/runtime", "lib/agui", "lib/db", "lib/checkpoint", "lib/shop", "lib/delivery"];
const FORBIDDEN = ["lib/agents", "lib/contract/questions"];

function productFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return productFiles(path);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Every module a file imports (static, dynamic and re-exports), as a path relative to the repository. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1] ?? "");
  return specs
    .filter((s) => s.startsWith("@/") || s.startsWith("."))
    .map((s) => (s.startsWith("@/") ? s.slice(2) : relative(root, resolve(dirname(file), s))));
}

describe("agent boundary", () => {
  it("finds the product files it checks", () => {
    for (const dir of GENERIC) expect(productFiles(join(root, dir)).length).toBeGreaterThan(0);
  });

  it("no generic layer imports an agent or the app's interrupt contract", () => {
    const offences = GENERIC.flatMap((dir) =>
      productFiles(join(root, dir)).flatMap((file) =>
        importsOf(file)
          .filter((target) => FORBIDDEN.some((f) => target === f || target.startsWith(`${f}/`)))
          .map((target) => `${relative(root, file)} → ${target}`),
      ),
    );
    expect(offences).toEqual([]);
  });

  it("would catch one (the check itself is not blind)", () => {
    const probe = join(root, "lib/runtime/agents/registry.ts");
    expect(importsOf(probe).some((t) => t.startsWith("lib/agui"))).toBe(true);
  });
});
