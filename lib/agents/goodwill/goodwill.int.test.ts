import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { recordAnswers } from "@/e2e/support/receipts";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { listEmailsForThread } from "@/lib/db/queries/outbox";
import type { AgentGraph } from "@/lib/runtime/agents/registry";
import { seedDemoOrders } from "@/lib/shop/demo-orders";
import { issueVoucher, listVouchersForThread } from "@/lib/shop/vouchers";
import { goodwillAgent } from "./agent";

/* The README's example agent, on our checkpointer in a real database: it pauses for a person and obeys its rules. */
describe.each<Backend>(["pglite", "postgres"])("the goodwill example agent on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let graph: AgentGraph;

  beforeAll(async () => {
    backend = await openBackend(kind);
    await seedDemoOrders({ db: backend.database.db });
    graph = goodwillAgent.build({
      checkpointer: new DrizzleCheckpointSaver(backend.database.sql),
      db: backend.database.db,
    });
  });
  afterAll(async () => {
    await backend?.close();
  });

  it("proposes 10 % of the order, pauses for a person, and replies once the voucher is granted", async () => {
    const config = { configurable: { thread_id: randomUUID() } };
    const input = goodwillAgent.input({
      messageId: randomUUID(),
      text: "Late again!",
      ticket: { message: "Late again!", orderRef: "ORD-1002" },
    });
    for await (const _ of await graph.stream(input, config)) {
      // run to the interrupt
    }
    const paused = await graph.getState(config);
    const [raised] = paused.tasks.flatMap((t) => t.interrupts);
    const parsed = goodwillAgent.interrupts.parse(raised?.value);
    expect(parsed).toMatchObject({ ok: true, action: "goodwill_voucher" });
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.payload).toMatchObject({
      voucher: { amountCents: 2490 },
      customer: { name: "Lars Jensen" },
    });
    expect(goodwillAgent.interrupts.validate(parsed.payload, { decision: "decline" }).ok).toBe(false);
    expect(goodwillAgent.interrupts.validate(parsed.payload, { decision: "grant", extra: 1 }).ok).toBe(false);

    const someone = { kind: "user" as const, id: "u-1", label: "a@x", role: "operator" as const };
    const attempt = {
      interruptId: raised!.id!,
      payload: parsed.payload,
      answer: { decision: "grant" },
      siblings: [],
      decided: [],
    };
    expect(() =>
      goodwillAgent.policy({
        ...attempt,
        principal: someone,
        involved: [{ id: "u-1", kind: "filer", why: "filed it" }],
      }),
    ).toThrow(/someone else/);
    expect(() => goodwillAgent.policy({ ...attempt, principal: someone, involved: [] })).not.toThrow();

    // The grant's receipt, as the ledger writes it when a person grants: the voucher is issued only against it.
    await recordAnswers({
      db: backend.database.db,
      agent: goodwillAgent,
      threadId: config.configurable.thread_id,
      answers: { [raised!.id!]: [raised?.value, { decision: "grant" }] },
    });
    for await (const _ of await graph.stream(
      new Command({ resume: { [raised!.id!]: { decision: "grant" } } }),
      config,
    )) {
      // run to the end
    }
    const done = await graph.getState(config);
    expect(done.next).toEqual([]);
    // The voucher is issued once, the email carrying its code is queued with it, and the reply says just that.
    const threadId = config.configurable.thread_id;
    const vouchers = await listVouchersForThread({ db: backend.database.db, threadId });
    expect(vouchers.map((v) => [v.amountCents, v.currency])).toEqual([[2490, "EUR"]]);
    const code = vouchers[0]!.code;
    expect(code).toMatch(/^GW-[A-Z2-9]{8}$/);
    const emails = await listEmailsForThread({ db: backend.database.db, threadId });
    expect(emails).toHaveLength(1);
    expect(emails[0]?.body).toContain(code);
    const reply = JSON.stringify((done.values as { messages: unknown[] }).messages.at(-1));
    expect(reply).toContain(`voucher worth €24.90 (code ${code})`);
    expect(reply).toContain("an email with the code is queued");

    // Issued again under the same decision (a replayed or recovered step): the same voucher, the same email.
    const again = await issueVoucher({
      db: backend.database.db,
      decisionRef: `${vouchers[0]!.idempotencyKey.slice("voucher:".length)}`,
      threadId,
      amountCents: 2490,
      currency: "EUR",
      grantedBy: "u-1",
      email: { to: emails[0]!.toAddress, subject: "Your goodwill voucher", body: (c) => c },
    });
    expect(again.voucher.id).toBe(vouchers[0]!.id);
    expect(await listVouchersForThread({ db: backend.database.db, threadId })).toHaveLength(1);
    expect(await listEmailsForThread({ db: backend.database.db, threadId })).toHaveLength(1);

    // A fork from the question would reach the reply again (a new step: a new voucher): said before the fork.
    const warned = await goodwillAgent.effects({
      db: backend.database.db,
      threadId,
      values: paused.values as Record<string, unknown>,
    });
    expect(warned.map((w) => w.code).sort()).toEqual(["side_effect:email", "side_effect:voucher"]);
    expect(
      await goodwillAgent.effects({
        db: backend.database.db,
        threadId,
        values: done.values as Record<string, unknown>,
      }),
    ).toEqual([]);
  });
});
