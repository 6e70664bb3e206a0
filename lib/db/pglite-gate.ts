import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { AppError } from "@/lib/contract/errors";

/*
 * The embedded database is one connection: a transaction holds it until it commits, and every other statement waits.
 * That is fine for other requests (they wait their turn), but a statement issued OUTSIDE an open transaction by the
 * code that transaction is awaiting waits for the transaction, which waits for it: the whole process hangs (seen on
 * an edited fork). Postgres with a pool never shows this, so it slips through every test run there.
 *
 * The gate is the one queue in front of the connection: every standalone statement and every transaction takes it.
 * - A caller inside an open transaction's async context (AsyncLocalStorage) that asks for the gate again is that
 *   deadlock, or detached work that will get its turn once the transaction ends: it waits at most `selfWaitMs`, then
 *   fails with `unavailable:database_busy`, naming the cause.
 * - Anyone else waits at most `waitMs` (a long transaction, a stuck statement), then fails the same way.
 * Nothing waits without bound.
 */

export interface GateOptions {
  /** How long a statement may wait for the connection (default 10 s). */
  waitMs?: number;
  /** How long a statement issued from inside an open transaction may wait for it (default 1.5 s). */
  selfWaitMs?: number;
}

interface Waiter {
  grant(): void;
  timer: NodeJS.Timeout;
}

interface TransactionContext {
  open: boolean;
}

export interface Gate {
  /** Run `fn` holding the connection (a standalone statement or a whole transaction). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Run a transaction's body so that statements it issues outside the transaction are recognised. */
  insideTransaction<T>(fn: () => Promise<T>): Promise<T>;
  /** Callers waiting for the connection now (for health). */
  readonly waiting: number;
}

export function busyError(reason: "own_transaction" | "wait", waitedMs: number): AppError {
  return new AppError(
    "unavailable:database_busy",
    reason === "own_transaction"
      ? "A statement waited on the transaction that was waiting for it (embedded database). Nothing was written."
      : `The database did not become free within ${waitedMs} ms. Try again.`,
    { reason, waitedMs },
  );
}

export function createGate(options: GateOptions = {}): Gate {
  const waitMs = options.waitMs ?? 10_000;
  const selfWaitMs = options.selfWaitMs ?? 1_500;
  const context = new AsyncLocalStorage<TransactionContext>();
  const queue: Waiter[] = [];
  let held = false;

  function release(): void {
    const next = queue.shift();
    if (next) {
      clearTimeout(next.timer);
      next.grant();
    } else {
      held = false;
    }
  }

  function acquire(): Promise<void> {
    if (!held) {
      held = true;
      return Promise.resolve();
    }
    const own = context.getStore()?.open === true;
    const limit = own ? selfWaitMs : waitMs;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          reject(busyError(own ? "own_transaction" : "wait", limit));
        }, limit),
      };
      queue.push(waiter);
    });
  }

  return {
    async exclusive(fn) {
      await acquire();
      try {
        return await fn();
      } finally {
        release();
      }
    },
    async insideTransaction(fn) {
      const state: TransactionContext = { open: true };
      try {
        return await context.run(state, fn);
      } finally {
        state.open = false;
      }
    },
    get waiting() {
      return queue.length;
    },
  };
}
