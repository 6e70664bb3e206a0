import type { EffectConnector, EffectDelivery } from "@/lib/delivery/connector";
import { connectorsByKind, type DeliveryQueue, deliverDue, type Settlement, settlementOf } from "./engine";

/*
 * The one delivery engine (issue 29) that effects and notifications both go through: one attempt and back-off model,
 * one connector per kind, and the same loop for any queue.
 */
const policy = { maxAttempts: 3, baseMs: 1_000, maxMs: 8_000 };

describe("settling an attempt", () => {
  it("tries a transient failure again after the back-off until the last attempt, never a refusal or an unknown outcome", () => {
    const transient = { ok: false as const, retry: true, error: "HTTP 503" };
    expect(settlementOf(transient, 1, policy, () => 1)).toEqual({
      ok: false,
      error: "HTTP 503",
      retryInMs: 1_000,
    });
    expect(settlementOf(transient, 2, policy, () => 0)).toEqual({
      ok: false,
      error: "HTTP 503",
      retryInMs: 1_000,
    });
    expect(settlementOf(transient, 3, policy)).toEqual({ ok: false, error: "HTTP 503", retryInMs: null });
    expect(settlementOf({ ok: false, retry: false, error: "card declined" }, 1, policy)).toMatchObject({
      retryInMs: null,
    });
    expect(
      settlementOf(
        { ok: false, retry: false, unconfirmed: true, error: "handed over", providerRef: "smtp:1" },
        1,
        policy,
      ),
    ).toEqual({ ok: false, error: "handed over", retryInMs: null, unconfirmed: { providerRef: "smtp:1" } });
    expect(settlementOf({ ok: true, providerRef: "re_1" }, 2, policy)).toEqual({
      ok: true,
      providerRef: "re_1",
    });
  });

  it("refuses two connectors for one kind", () => {
    const one: EffectConnector = { kind: "email", deliver: async () => ({ ok: true, providerRef: null }) };
    expect(() => connectorsByKind([one, { ...one }])).toThrow(/two connectors deliver email/);
    expect([...connectorsByKind([one]).keys()]).toEqual(["email"]);
  });
});

describe("the loop over any queue", () => {
  type Item = { id: string; kind: string; attempts: number };
  function queueOf(items: Item[]) {
    const settled: [string, Settlement][] = [];
    const queue: DeliveryQueue<Item> = {
      claim: async () => items,
      kindOf: (i) => i.kind,
      attemptsOf: (i) => i.attempts,
      delivery: (i): EffectDelivery => ({
        id: i.id,
        idempotencyKey: `k-${i.id}`,
        attempt: i.attempts,
        payload: {},
        handedOver: false,
        markHandedOver: async () => {},
      }),
      settle: async (i, s) => {
        settled.push([i.id, s]);
      },
    };
    return { queue, settled };
  }

  it("delivers each through its kind's connector, refuses a kind without one, and tries again after a throw", async () => {
    const seen: string[] = [];
    const connectors = connectorsByKind([
      {
        kind: "webhook",
        deliver: async (d) => {
          seen.push(d.idempotencyKey);
          return { ok: true, providerRef: null };
        },
      },
      {
        kind: "payment",
        deliver: async () => {
          throw new Error("socket hang up");
        },
      },
    ]);
    const { queue, settled } = queueOf([
      { id: "a", kind: "webhook", attempts: 1 },
      { id: "b", kind: "fax", attempts: 1 },
      { id: "c", kind: "payment", attempts: 1 },
    ]);
    expect(await deliverDue(queue, connectors, policy)).toBe(3);
    expect(seen).toEqual(["k-a"]);
    const by = new Map(settled);
    expect(by.get("a")).toEqual({ ok: true, providerRef: null });
    expect(by.get("b")).toMatchObject({ ok: false, error: "no connector for fax", retryInMs: null });
    expect(by.get("c")).toMatchObject({ ok: false, error: "socket hang up" });
    expect((by.get("c") as { retryInMs: number }).retryInMs).toBeGreaterThanOrEqual(500);
  });
  it("records a delivered outcome again while the database is away (within settleRetryMs), never delivering twice; any other error is not retried", async () => {
    let delivered = 0;
    const connectors = connectorsByKind([
      {
        kind: "email",
        deliver: async () => {
          delivered += 1;
          return { ok: true, providerRef: "smtp:1" };
        },
      },
    ]);
    const lost = Object.assign(new Error("Connection terminated unexpectedly"), {});
    const flaky = (failures: unknown[]) => {
      const { queue, settled } = queueOf([{ id: "a", kind: "email", attempts: 1 }]);
      let calls = 0;
      const settle = queue.settle;
      queue.settle = async (item, settlement) => {
        calls += 1;
        const failure = failures.shift();
        if (failure) throw failure;
        await settle(item, settlement);
      };
      return { queue, settled, calls: () => calls };
    };
    // Two failed records during the outage, then the database is back: recorded once, delivered once.
    const back = flaky([lost, { code: "57P03", message: "the database system is starting up" }]);
    expect(await deliverDue(back.queue, connectors, { ...policy, settleRetryMs: 5_000 })).toBe(1);
    expect(back.calls()).toBe(3);
    expect(back.settled).toEqual([["a", { ok: true, providerRef: "smtp:1" }]]);
    expect(delivered).toBe(1);
    // Not a database fault (a bug, a constraint): thrown at once, not tried again.
    const bug = flaky([Object.assign(new Error("duplicate key"), { code: "23505" })]);
    await expect(deliverDue(bug.queue, connectors, { ...policy, settleRetryMs: 5_000 })).rejects.toThrow(
      "duplicate key",
    );
    expect(bug.calls()).toBe(1);
    // Without settleRetryMs (or past it), a fault is thrown: the claim's lease and the reconciler take over.
    const away = flaky([lost]);
    await expect(deliverDue(away.queue, connectors, policy)).rejects.toThrow("Connection terminated");
    expect(away.calls()).toBe(1);
  });
});
