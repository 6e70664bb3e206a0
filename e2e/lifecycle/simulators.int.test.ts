import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFor, answer, createTicket, runOnce } from "../api/client";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { authedFetch } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import type { TestServer } from "../support/server";

/*
 * Simulators are said, never implied. A deployment (DATABASE_URL) without PAYMENT_URL used to pay through the
 * in-process simulator and show "Delivered" (and SMTP-less email went to .eml files the same way). Now it does not
 * start unless the simulation is meant, and every simulated delivery says so in the API (`simulated`).
 */
describe("simulated payment and email", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let provider: FakePaymentProvider;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    prepared = await prepareDatabase("simulators");
    provider = await startFakePaymentProvider();
  });
  afterAll(async () => {
    await cleanUp(servers, prepared);
    await provider?.close();
  });

  it("refuses to start with DATABASE_URL and no PAYMENT_URL unless PAYMENT_SIMULATED says so", async () => {
    await expect(
      startTestServer({ databaseUrl: prepared.url, env: { PAYMENT_SIMULATED: "0" } }),
    ).rejects.toThrow(/PAYMENT_URL is not set/);
  });

  it("refuses to start with DATABASE_URL and no SMTP_URL unless EMAIL_SIMULATED says so", async () => {
    await expect(
      startTestServer({ databaseUrl: prepared.url, env: { EMAIL_SIMULATED: "0" } }),
    ).rejects.toThrow(/SMTP_URL is not set/);
  });

  async function refundedThread(base: string, order: string) {
    const message = `My item from ${order} arrived broken, please refund it.`;
    const threadId = await createTicket(base, message);
    const agent = agentFor(base, threadId);
    const first = await runOnce(agent, { message });
    const second = await runOnce(agent, { resume: [answer(first.interrupts[0]!, { decision: "approve" })] });
    await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "send" })] });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { effects } = (await (await authedFetch(`${base}/api/threads/${threadId}/effects`)).json()) as {
        effects: { kind: string; status: string; simulated: boolean }[];
      };
      if (effects.length === 2 && effects.every((e) => e.status === "delivered")) return effects;
      if (Date.now() > deadline) throw new Error(`effects not delivered: ${JSON.stringify(effects)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it("labels every simulated delivery, and only those", async () => {
    const simulated = await startTestServer({ databaseUrl: prepared.url, env: { EFFECT_POLL_MS: "100" } });
    servers.push(simulated);
    const all = await refundedThread(simulated.url, "ORD-1002");
    expect(all.map((e) => [e.kind, e.simulated]).sort()).toEqual([
      ["email", true],
      ["payment", true],
    ]);
    await simulated.stop();

    const paying = await startTestServer({
      databaseUrl: prepared.url,
      env: { PAYMENT_URL: provider.url, PAYMENT_SIMULATED: "0", EFFECT_POLL_MS: "100" },
    });
    servers.push(paying);
    const real = await refundedThread(paying.url, "ORD-1008");
    expect(real.map((e) => [e.kind, e.simulated]).sort()).toEqual([
      ["email", true],
      ["payment", false],
    ]);
    expect(provider.created.map((r) => r.orderId)).toEqual(["ORD-1008"]);
  });
});
