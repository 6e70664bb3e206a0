import "server-only";
import { randomUUID } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { singleton } from "@/lib/platform/singleton";

/**
 * This server process's identity as a run owner: a random id, nothing else. Hostname and pid are only labels (see
 * {@link instanceLabels}): replicas in separate containers share a hostname and are all pid 1.
 */
export function instanceId(): string {
  return singleton("instance-id", () => randomUUID());
}

export interface InstanceLabels {
  hostname: string;
  pid: number;
  /** This boot of this machine; null where /proc does not tell (not Linux). */
  bootId: string | null;
  /** The pid namespace `pid` is a pid in; null where /proc does not tell. */
  pidNamespace: string | null;
}

/** Where this process runs, recorded next to its id in `instances`. */
export function instanceLabels(): InstanceLabels {
  return { hostname: hostname(), pid: process.pid, bootId: bootId(), pidNamespace: pidNamespace() };
}

function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

function pidNamespace(): string | null {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
}

/**
 * Whether instance `id`, recorded with `pid` in this process's own boot and pid namespace, is provably gone: its pid
 * no longer exists, or it is our own pid under another id (the pid was reused by this process). Anything short of
 * proof (the pid exists, or we may not signal it) counts as alive, so the run waits for its lease instead.
 */
export function isGoneHere(id: string, pid: number): boolean {
  if (pid === process.pid) return id !== instanceId();
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
