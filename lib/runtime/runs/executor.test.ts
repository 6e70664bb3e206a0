import type { Run } from "@/lib/db/schema";

// The database is what an execution reaches for first: held pending here, each execution that starts is counted and
// stays in flight, as a run does while its graph works.
const getDatabase = vi.fn(() => new Promise(() => {}));
vi.mock("@/lib/db/client", () => ({ getDatabase: () => getDatabase() }));

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
    startRunInBackground(run("run-a"), 3);
    startRunInBackground(run("run-a"), 3, { recovered: true });
    // Another run is not held back by it.
    startRunInBackground(run("run-b"), 0);
    await new Promise((r) => setTimeout(r, 10));
    expect(getDatabase).toHaveBeenCalledTimes(2);
    expect([...activeRuns().keys()].sort()).toEqual(["run-a", "run-b"]);
  });
});
