import { AppError, appErrorOf } from "@/lib/contract/errors";
import { fetchThreadView, isStreamBroken, readEventStream } from "./event-stream";
import type { ThreadStore } from "./thread-store";

const POLL_MS = 5_000;
const MAX_BACKOFF_MS = 3_000;

/** Wait `ms`, or less if aborted. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Keeps the page attached to its thread. `follow()` reads the thread's events after the page's last seq until no
 * run is active, then re-reads the thread view; a broken connection is retried with backoff from the last seq the
 * page applied (so nothing is missed, and the store drops anything seen twice). While nothing runs, the view is
 * polled, so a decision taken in another tab shows up here too.
 */
export class ThreadConnection {
  private abort = new AbortController();
  private following: Promise<void> | null = null;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  /** True while a run request of this page is streaming (its own stream, so no follower is needed). */
  streaming = false;

  constructor(
    readonly threadId: string,
    readonly store: ThreadStore,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Attach (again: React may mount, unmount and mount an effect in development). */
  start(): void {
    if (this.abort.signal.aborted) this.abort = new AbortController();
    void this.follow();
    this.pollTimer = setInterval(() => void this.poll(), POLL_MS);
  }

  stop(): void {
    clearInterval(this.pollTimer);
    this.abort.abort();
    this.following = null;
  }

  /** Follow the thread's events (one follower at a time); resolves once no run is active and the view is fresh. */
  follow(): Promise<void> {
    if (!this.following) {
      const loop: Promise<void> = this.followLoop(this.abort.signal).finally(() => {
        if (this.following === loop) this.following = null;
      });
      this.following = loop;
    }
    return this.following;
  }

  /**
   * Something changed on this thread elsewhere (another tab decided, a run started on another instance; the inbox
   * stream said so): re-read the view now rather than at the next poll, and follow the run if one is active.
   */
  nudge(): void {
    if (this.following || this.streaming || this.abort.signal.aborted) return;
    void this.poll(true);
  }

  /** Re-read the thread view into the store (errors are the caller's). */
  async refresh(): Promise<void> {
    this.store.applyView(await fetchThreadView(this.threadId, this.signal));
  }

  private async followLoop(signal: AbortSignal): Promise<void> {
    const { store } = this;
    let attempt = 0;
    while (!signal.aborted) {
      try {
        store.update((s) => ({ ...s, connection: attempt > 0 ? "reconnecting" : "live" }));
        const url = `/api/threads/${encodeURIComponent(this.threadId)}/events?after=${store.lastSeq}`;
        await readEventStream(url, signal, (event) => {
          if (attempt > 0) {
            attempt = 0;
            store.update((s) => ({ ...s, connection: "live", reconnectAttempt: 0 }));
          }
          store.applyEvent(event);
        });
        const view = await fetchThreadView(this.threadId, signal);
        store.applyView(view);
        attempt = 0;
        if (!view.activeRunId) break;
        await sleep(300, signal); // the run is still active: read on after a breath
      } catch (error) {
        if (signal.aborted) break;
        if (!isStreamBroken(error)) {
          const appError = appErrorOf(error) ?? AppError.fromBody(null, 500);
          store.update((s) => ({ ...s, error: { code: appError.code, message: appError.message } }));
          break;
        }
        attempt += 1;
        store.update((s) => ({ ...s, connection: "reconnecting", reconnectAttempt: attempt }));
        const backoff = Math.min(MAX_BACKOFF_MS, 250 * 2 ** (attempt - 1));
        await sleep(backoff * (0.75 + Math.random() * 0.5), signal);
      }
    }
    store.update((s) => ({ ...s, connection: "idle", reconnectAttempt: 0 }));
  }

  private async poll(nudged = false): Promise<void> {
    if (this.following || this.streaming) return;
    if (!nudged && document.visibilityState !== "visible") return;
    try {
      await this.refresh();
      if (this.store.current.serverDown) this.store.update((s) => ({ ...s, serverDown: false }));
      if (this.store.current.activeRunId) void this.follow();
    } catch (error) {
      // A refusal (a 4xx) is an answer; no answer at all (network, 5xx) means the server is down: say so, retry.
      const down = isStreamBroken(error) || (appErrorOf(error)?.status ?? 0) >= 500;
      if (down && !this.abort.signal.aborted && !this.store.current.serverDown) {
        this.store.update((s) => ({ ...s, serverDown: true }));
      }
    }
  }
}
