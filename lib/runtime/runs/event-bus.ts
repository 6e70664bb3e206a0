import "server-only";
import { EventEmitter } from "node:events";
import type { LoggedEvent } from "@/lib/db/queries/events";

/**
 * In-process fan-out of events that were just made durable: a subscriber hears a batch right after it is committed
 * to the event log. Subscribers treat it as a wake-up plus a fast path; the log stays the source of truth (a gap in
 * what they heard makes them read the log).
 */
const KEY = Symbol.for("hitl-console.event-bus");
type G = typeof globalThis & { [KEY]?: EventEmitter };

function emitter(): EventEmitter {
  const g = globalThis as G;
  if (!g[KEY]) {
    g[KEY] = new EventEmitter();
    g[KEY].setMaxListeners(0);
  }
  return g[KEY];
}

export function publishEvents(threadId: string, batch: LoggedEvent[]): void {
  if (batch.length > 0) emitter().emit(threadId, batch);
}

export function subscribeEvents(threadId: string, listener: (batch: LoggedEvent[]) => void): () => void {
  const e = emitter();
  e.on(threadId, listener);
  return () => e.off(threadId, listener);
}

/** Wake this process's subscribers of a thread without events: another instance appended some (read the log). */
export function wakeThread(threadId: string): void {
  emitter().emit(threadId, []);
}
