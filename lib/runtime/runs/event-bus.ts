import "server-only";
import { EventEmitter } from "node:events";
import type { LoggedEvent } from "@/lib/db/queries/events";
import { singleton } from "@/lib/platform/singleton";

/**
 * In-process fan-out of events that were just made durable: a subscriber hears a batch right after it is committed
 * to the event log. Subscribers treat it as a wake-up plus a fast path; the log stays the source of truth (a gap in
 * what they heard makes them read the log).
 */
function emitter(): EventEmitter {
  // Process-wide: a run executed from one bundle publishes to streams served from another.
  return singleton("event-bus", () => {
    const bus = new EventEmitter();
    bus.setMaxListeners(0);
    return bus;
  });
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
