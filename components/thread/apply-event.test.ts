import type { ThreadView } from "@/lib/contract/views/thread";
import { applyEvent, foldRunEvents, type StreamEvent } from "./apply-event";
import { messageText } from "./messages";
import { applyView, initialThreadState, markConflict, type ThreadState, withPending } from "./thread-state";

/** The reducer never reads a payload: the raw value stands in for one. */
const approval = {
  interruptId: "i-1",
  action: "refund_approval",
  payload: null,
  raw: { action: "refund_approval" },
};

function view(overrides: Partial<ThreadView> = {}): ThreadView {
  return {
    threadId: "t-1",
    forked: false,
    erased: false,
    answeringDifferently: null,
    agentId: "refund",
    agentVersion: "1",
    attention: null,
    title: "Refund",
    customerMessage: "Refund ORD-1002",
    orderRef: null,
    ticket: { message: "hi" },
    ticketLines: [],
    status: "interrupted",
    activeRunId: null,
    values: {},
    messages: [{ id: "u-1", role: "user", content: "Refund ORD-1002" }],
    pendingInterrupts: [{ ...approval, raisedAt: null }],
    decisions: [],
    effects: [],
    receipts: [],
    queuedInputs: [],
    lastSeq: 16,
    checkpointId: null,
    updatedAt: "2026-11-30T08:00:00.000Z",
    ...overrides,
  };
}

const ev = (seq: number, type: string, fields: Record<string, unknown> = {}): StreamEvent => ({
  type,
  ...fields,
  metadata: { seq },
});

const reply = [
  ev(17, "RUN_STARTED", { runId: "r-2" }),
  ev(18, "STEP_STARTED", { stepName: "write_reply" }),
  ev(19, "TEXT_MESSAGE_START", { messageId: "a-1", role: "assistant" }),
  ev(20, "TEXT_MESSAGE_CONTENT", { messageId: "a-1", delta: "Hello " }),
  ev(21, "TEXT_MESSAGE_CONTENT", { messageId: "a-1", delta: "Lars" }),
];

const run = (state: ThreadState, events: StreamEvent[]) => events.reduce(applyEvent, state);
const text = (state: ThreadState, id: string) => messageText(state.messages.find((m) => m.id === id)!);

describe("applyEvent", () => {
  it("applies each seq once: a reconnect overlap is dropped", () => {
    const once = run(initialThreadState(view()), reply);
    const twice = run(once, [
      ...reply.slice(2),
      ev(22, "TEXT_MESSAGE_CONTENT", { messageId: "a-1", delta: "!" }),
    ]);
    expect(text(twice, "a-1")).toBe("Hello Lars!");
    expect(twice.applied).toEqual([17, 18, 19, 20, 21, 22]);
    expect(twice.dropped).toBe(3);
    expect(twice.steps).toEqual(["write_reply"]);
  });

  it("keeps the forms of this tab's own decisions out of `closed` when its run starts", () => {
    const mine = { ...initialThreadState(view()), ownIds: ["i-1"] };
    expect(run(mine, reply.slice(0, 1)).closed).toEqual([]);
    const theirs = run(initialThreadState(view()), reply.slice(0, 1));
    expect(theirs.closed.map((c) => c.interruptId)).toEqual(["i-1"]);
  });

  it("closes a form this tab answered when the refusal comes back after a fresh view dropped it", () => {
    // The tab sends its answer; before the 409 arrives, a view read after somebody else's answer (and the run it
    // started, already at its next question) no longer lists the decision.
    const sent = { ...initialThreadState(view()), ownIds: ["i-1"] };
    const moved = withPending(sent, []);
    expect(moved.pending).toEqual([]);
    expect(moved.closed).toEqual([]);
    const conflict = {
      resolvedBy: "operator@example.com",
      resolvedAt: "2026-12-05T06:35:32Z",
      answer: { optionId: "store_credit" },
      message: "Decided elsewhere.",
    };
    const refused = markConflict(moved, "i-1", conflict);
    expect(refused.closed.map((c) => [c.interruptId, c.conflict])).toEqual([["i-1", conflict]]);
    expect(refused.ownIds).toEqual([]);
  });

  it("restarts a message the state already holds instead of doubling it", () => {
    const fromView = initialThreadState(
      view({ activeRunId: "r-2", messages: [{ id: "a-1", role: "assistant", content: "Hello Lars" }] }),
    );
    const state = run({ ...fromView, lastSeq: 16 }, reply);
    expect(state.messages.filter((m) => m.id === "a-1")).toHaveLength(1);
    expect(text(state, "a-1")).toBe("Hello Lars");
  });

  it("ends a paused run with the interrupts of RUN_FINISHED as the pending decisions", () => {
    const finished = run(initialThreadState(view({ pendingInterrupts: [] })), [
      ...reply,
      ev(22, "TEXT_MESSAGE_END", { messageId: "a-1" }),
      ev(23, "STEP_FINISHED", { stepName: "write_reply" }),
      ev(24, "RUN_FINISHED", {
        outcome: {
          type: "interrupt",
          interrupts: [{ id: "i-2", reason: "confirm_email", metadata: { payload: {} } }],
        },
      }),
    ]);
    expect(finished.status).toBe("interrupted");
    expect(finished.pending.map((p) => [p.interruptId, p.action])).toEqual([["i-2", "confirm_email"]]);
    expect(finished.steps).toEqual([]);
  });
  it("reads AG-UI 1.0's cancelled outcome as a stop, with who stopped it, not as a failure", () => {
    const stopped = run(initialThreadState(view({ pendingInterrupts: [] })), [
      ...reply,
      ev(22, "TEXT_MESSAGE_END", { messageId: "a-1" }),
      ev(23, "STEP_FINISHED", { stepName: "write_reply" }),
      {
        type: "RUN_FINISHED",
        outcome: { type: "cancelled" },
        // On the wire the stop rides beside the event's sequence number.
        metadata: {
          seq: 24,
          stop: { code: "conflict:run_cancelled", message: "Stopped by ann@example.com." },
        },
      },
    ]);
    expect(stopped.status).toBe("stopped");
    expect(stopped.runError).toEqual({
      code: "conflict:run_cancelled",
      message: "Stopped by ann@example.com.",
    });
    expect(stopped.pending).toEqual([]);
    expect(stopped.activeRunId).toBeNull();
  });
});

describe("foldRunEvents and applyView", () => {
  it("folds the active run's logged events into the server render, ending at its lastSeq", () => {
    const state = foldRunEvents(initialThreadState(view({ activeRunId: "r-2", lastSeq: 21 })), reply);
    expect(state.lastSeq).toBe(21);
    expect(text(state, "a-1")).toBe("Hello Lars");
    expect(state.status).toBe("running");
  });

  it("ignores a view older than the applied events and keeps live messages while a run is active", () => {
    const live = run(initialThreadState(view()), reply);
    expect(applyView(live, view({ lastSeq: 16 }))).toBe(live);
    const stillRunning = applyView(live, view({ lastSeq: 30, activeRunId: "r-2", pendingInterrupts: [] }));
    expect(stillRunning.lastSeq).toBe(21);
    expect(text(stillRunning, "a-1")).toBe("Hello Lars");
  });

  it("closes a form with who decided when a 409 says so", () => {
    const state = markConflict(initialThreadState(view()), "i-1", {
      resolvedBy: "bob",
      resolvedAt: "2026-11-30T08:41:28.803Z",
      answer: { decision: "approve" },
      message: "bob already decided this",
    });
    expect(state.pending).toEqual([]);
    expect(state.closed[0]?.conflict?.resolvedBy).toBe("bob");
    // A view read before bob's answer committed still lists it pending: the form stays closed, never shown twice
    // (once open, once closed) as two tabs racing to approve once saw.
    const stale = applyView(state, view());
    expect(stale.pending).toEqual([]);
    expect(stale.closed.map((c) => c.interruptId)).toEqual(["i-1"]);
  });
});

describe("the decision history moves with the events (issue 55)", () => {
  const waiting = {
    interruptId: "i-1",
    action: "refund_approval",
    status: "pending",
    answer: null,
    resolvedBy: null,
    resolvedAt: null,
    checkpointId: "cp-1",
    dueAt: "2026-12-01T08:00:00.000Z",
    escalatedAt: null,
    escalatedTo: [],
  };

  it("marks the decisions a resume run carries as taken, with the answer, who and when", () => {
    const state = initialThreadState(view({ decisions: [waiting] }));
    const next = run(state, [
      ev(17, "RUN_STARTED", { runId: "r-2" }),
      ev(18, "CUSTOM", {
        name: "decisions_recorded",
        value: [
          {
            interruptId: "i-1",
            status: "resolved",
            answer: { decision: "approve" },
            by: "ops@example.com",
            at: "2026-12-01T07:00:00.000Z",
          },
        ],
      }),
    ]);
    expect(next.decisions).toEqual([
      {
        ...waiting,
        status: "resolved",
        answer: { decision: "approve" },
        resolvedBy: "ops@example.com",
        resolvedAt: "2026-12-01T07:00:00.000Z",
      },
    ]);
  });

  it("adds the questions a run ends on as waiting, once each", () => {
    const state = initialThreadState(view({ decisions: [{ ...waiting, status: "resolved" }] }));
    const asked = {
      outcome: {
        type: "interrupt",
        interrupts: [{ id: "i-2", reason: "send_email", metadata: { payload: { to: "x" } } }],
      },
    };
    const next = run(state, [ev(17, "RUN_STARTED", { runId: "r-2" }), ev(18, "RUN_FINISHED", asked)]);
    expect(next.decisions.map((d) => [d.interruptId, d.action, d.status])).toEqual([
      ["i-1", "refund_approval", "resolved"],
      ["i-2", "send_email", "pending"],
    ]);
    expect(next.pending.map((p) => p.interruptId)).toEqual(["i-2"]);
    // A replay of the same end does not add it twice.
    const again = applyEvent({ ...next, lastSeq: 17 }, ev(18, "RUN_FINISHED", asked));
    expect(again.decisions).toHaveLength(2);
  });
});
