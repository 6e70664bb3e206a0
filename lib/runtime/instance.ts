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

/** The part of an owner id that names the host ("host:"), and whether an owner id's process on this host is gone. */
export function thisHostPrefix(): string {
  return `${hostname()}:`;
}

export function isDeadLocalOwner(owner: string): boolean {
  const [host, pid] = owner.split(":");
  if (host !== hostname() || !pid || !/^\d+$/.test(pid)) return false;
  if (Number(pid) === process.pid) return owner !== instanceId();
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
