import type { Database } from "@/lib/db/open";
import type { Run } from "@/lib/db/schema";

// Each execution that starts is counted and stays in flight, as a run does while its graph works.
const executeRun = vi.fn((..._args: unknown[]) => new Promise(() => {}));
vi.mock("./execute", () => ({ executeRun: (...args: unknown[]) => executeRun(...args) }));
const database = {} as Database;

const { activeRuns, startRunInBackground } = await import("./executor");

const run = (id: string) =>
  ({
    id,
    threadId: `thread-of-${id}`,
    kind: "resume",
    owner: "this-instance",
    attempts: 1,
    agentKey: "refund@1",
    traceId: null,
    traceSpanId: null,
  }) as unknown as Run;

describe("startRunInBackground", () => {
  it("never starts a second execution of a run already executing in this process (a request and the sweeper)", async () => {
    // A request starts the run; the sweeper, from a snapshot taken before the run registered, starts it as recovered.
    startRunInBackground({ database, run: run("run-a"), startSeq: 3 });
    startRunInBackground({ database, run: run("run-a"), startSeq: 3, options: { recovered: true } });
    // Another run is not held back by it.
    startRunInBackground({ database, run: run("run-b"), startSeq: 0 });
    await new Promise((r) => setTimeout(r, 10));
    expect(executeRun).toHaveBeenCalledTimes(2);
    expect([...activeRuns().keys()].sort()).toEqual(["run-a", "run-b"]);
  });
});
