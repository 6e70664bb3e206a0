import { createGate } from "./gate";

describe("the sign-in gate", () => {
  it("runs at most `concurrency` tasks, queues up to `queue`, and refuses the rest at once", async () => {
    const gate = createGate({ concurrency: 2, queue: 3 });
    let running = 0;
    let peak = 0;
    const releases: (() => void)[] = [];
    const task = () =>
      new Promise<number>((resolve) => {
        running++;
        peak = Math.max(peak, running);
        releases.push(() => {
          running--;
          resolve(running);
        });
      });
    const results = Array.from({ length: 8 }, () => gate.run(task));
    await new Promise((r) => setTimeout(r, 0));
    expect(gate.load()).toEqual({ running: 2, waiting: 3 });
    const refused = await Promise.all(results.slice(5));
    expect(refused).toEqual([{ busy: true }, { busy: true }, { busy: true }]);
    while (releases.length > 0) {
      releases.shift()?.();
      await new Promise((r) => setTimeout(r, 0));
    }
    const done = await Promise.all(results.slice(0, 5));
    expect(done.every((d) => !d.busy)).toBe(true);
    expect(peak).toBe(2);
    expect(gate.load()).toEqual({ running: 0, waiting: 0 });
  });

  it("frees its slot when a task throws", async () => {
    const gate = createGate({ concurrency: 1, queue: 0 });
    await expect(gate.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await gate.run(async () => 42)).toEqual({ busy: false, value: 42 });
  });
});
