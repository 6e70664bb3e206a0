import "server-only";

/**
 * A counting semaphore with a bounded queue: at most `concurrency` tasks run at once, at most `queue` wait, and
 * anything beyond is refused at once (`run` resolves to `{ busy: true }`) rather than piling up.
 */
export interface Gate {
  run<T>(task: () => Promise<T>): Promise<{ busy: false; value: T } | { busy: true }>;
  /** Running and waiting tasks (for tests and diagnostics). */
  load(): { running: number; waiting: number };
}

export function createGate({ concurrency, queue }: { concurrency: number; queue: number }): Gate {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return {
    async run(task) {
      if (running < concurrency) running++;
      else if (waiting.length < queue) await new Promise<void>((resolve) => waiting.push(resolve));
      else return { busy: true };
      try {
        return { busy: false, value: await task() };
      } finally {
        release();
      }
    },
    load: () => ({ running, waiting: waiting.length }),
  };
}
