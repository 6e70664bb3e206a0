import "server-only";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { singleton } from "./singleton";

/**
 * The production build this process serves (Next's build id: random per `next build`, so two builds of different
 * code never share one), or null when there is none to name — a development server (its code changes under the same
 * id), a script, a test in process. Read once.
 */
export function currentBuild(): string | null {
  return singleton("current-build", () => ({ id: readBuildId() })).id;
}

function readBuildId(): string | null {
  if (process.env.NODE_ENV !== "production") return null;
  try {
    const id = readFileSync(
      join(process.cwd(), process.env.NEXT_DIST_DIR || ".next", "BUILD_ID"),
      "utf8",
    ).trim();
    return id === "" || id === "development" ? null : id;
  } catch {
    return null;
  }
}
