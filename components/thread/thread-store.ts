import { applyEvent, type StreamEvent } from "./apply-event";
import {
  applyView,
  type ConflictDetails,
  markConflict,
  type ThreadState,
  type ThreadViewJson,
} from "./thread-state";

/**
 * The page's state outside React, so the stream readers see the latest `lastSeq` synchronously (React state would
 * lag a render behind, and a reconnect that asked for events after a stale seq would get some twice). React reads
 * it with `useSyncExternalStore`.
 */
export class ThreadStore {
  private state: ThreadState;
  private readonly listeners = new Set<() => void>();

  constructor(initial: ThreadState) {
    this.state = initial;
  }

  readonly getSnapshot = (): ThreadState => this.state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  get lastSeq(): number {
    return this.state.lastSeq;
  }

  get current(): ThreadState {
    return this.state;
  }

  applyEvent(event: StreamEvent): void {
    this.set(applyEvent(this.state, event));
  }

  applyView(view: ThreadViewJson): void {
    this.set(applyView(this.state, view));
  }

  conflict(interruptId: string, details: ConflictDetails): void {
    this.set(markConflict(this.state, interruptId, details));
  }

  update(change: (state: ThreadState) => ThreadState): void {
    this.set(change(this.state));
  }

  private set(next: ThreadState): void {
    if (next === this.state) return;
    this.state = next;
    for (const listener of this.listeners) listener();
  }
}
