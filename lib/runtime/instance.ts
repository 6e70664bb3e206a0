import "server-only";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

const KEY = Symbol.for("hitl-console.instance-id");
type G = typeof globalThis & { [KEY]?: string };

/** This server process's identity as a run owner: host, pid and a random suffix (pids are reused). */
export function instanceId(): string {
  const g = globalThis as G;
  g[KEY] ??= `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  return g[KEY];
}
