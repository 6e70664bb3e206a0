import type { BaseEvent } from "@ag-ui/core";
import type { AppDb } from "@/lib/db/open";

const appendEvents = vi.fn();
vi.mock("@/lib/db/queries/events", async (importOriginal) => ({
  ...(await importOriginal<typeof import("@/lib/db/queries/events")>()),
  appendEvents: (args: unknown) => appendEvents(args),
}));
vi.mock("./event-bus", () => ({ publishEvents: () => {} }));

const { EventSink } = await import("./event-sink");
const event = { type: "CUSTOM", name: "x", value: 1 } as unknown as BaseEvent;

describe("EventSink after a failed write", () => {
  it("keeps refusing (drain throws) without spinning: emits after the failure start no write", async () => {
    appendEvents.mockResolvedValueOnce(false); // ownership lost on the first batch
    const sink = new EventSink({} as AppDb, "t-1", "r-1", "owner", 0);
    sink.emit([event]);
    await expect(sink.drain()).rejects.toThrow(/no longer owned/);
    // Before the fix this emit left `flushing` set to a settled promise, and drain() then awaited it forever in
    // microtasks, which froze the server (heartbeats stopped, every run of the process stalled). Checked without
    // calling drain(), so a regression fails here instead of hanging the test worker.
    sink.emit([event]);
    await new Promise((r) => setTimeout(r, 0));
    expect((sink as unknown as { flushing: unknown }).flushing).toBeNull();
    await expect(sink.drain()).rejects.toThrow(/no longer owned/);
    expect(appendEvents).toHaveBeenCalledTimes(1);
  });
});

describe("EventSink losing its run", () => {
  it("tells its execution at once (to stop the graph), once, with the ownership error", async () => {
    appendEvents.mockReset();
    appendEvents.mockResolvedValueOnce(true).mockResolvedValueOnce(false);
    const lost: unknown[] = [];
    const sink = new EventSink({} as AppDb, "t-2", "r-2", "owner", 0, (error) => lost.push(error));
    sink.emit([event]);
    await sink.drain();
    expect(lost).toEqual([]);
    sink.emit([event, event]);
    await expect(sink.drain()).rejects.toThrow(/no longer owned/);
    expect(lost).toHaveLength(1);
    expect((lost[0] as Error).name).toBe("LostOwnershipError");
    sink.emit([event]);
    await expect(sink.drain()).rejects.toThrow(/no longer owned/);
    expect(lost).toHaveLength(1);
  });
});
