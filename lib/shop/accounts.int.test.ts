import { randomUUID } from "node:crypto";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { listThreadEffects } from "../db/queries/effects";
import { listEmailsForThread } from "../db/queries/outbox";
import {
  applyAccountChange,
  getCustomerAccount,
  listAccountChangesForThread,
  recordAccountChange,
} from "./accounts";

/* An approved account change: recorded once per decision, applied once however often it is delivered, and the
 * customer emailed that it was made only when it was. */
describe.each<Backend>(["pglite", "postgres"])("account changes on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    backend = await openBackend(kind);
  });
  afterAll(async () => {
    await backend?.close();
  });

  it("records once per decision, applies once, and emails only after applying", async () => {
    const db = backend.database.db;
    const threadId = randomUUID();
    const email = `${threadId.slice(0, 8)}@example.com`;
    const change = {
      db,
      decisionRef: `${threadId}/apply:1`,
      threadId,
      accountEmail: email,
      customerName: "Ada",
      field: "payout" as const,
      from: null,
      to: "DE89 3704 0044 0532 0130 00",
    };
    const first = await recordAccountChange(change);
    const again = await recordAccountChange(change);
    expect(again.change.id).toBe(first.change.id);
    expect(again.effect.id).toBe(first.effect.id);
    expect((await listThreadEffects({ db, threadId })).map((e) => e.kind)).toEqual(["account_update"]);
    // Recorded, not made: no account change and no "updated" email yet.
    expect(await getCustomerAccount({ db, email })).toBeUndefined();
    expect(await listEmailsForThread({ db, threadId })).toEqual([]);

    expect((await applyAccountChange({ db, changeId: first.change.id })).applied).toBe(true);
    expect((await applyAccountChange({ db, changeId: first.change.id })).applied).toBe(false);
    expect(await getCustomerAccount({ db, email })).toMatchObject({ payout: change.to, address: null });
    const emails = await listEmailsForThread({ db, threadId });
    expect(emails.map((e) => [e.toAddress, e.subject])).toEqual([[email, "Your payout account"]]);
    expect(emails[0]?.body).toContain("has been updated");
    expect((await listAccountChangesForThread({ db, threadId })).map((c) => c.appliedAt !== null)).toEqual([
      true,
    ]);

    // A second approved change (another decision) of another field keeps the first.
    const address = await recordAccountChange({
      ...change,
      decisionRef: `${threadId}/apply:2`,
      field: "address",
      to: "1 Main St",
    });
    await applyAccountChange({ db, changeId: address.change.id });
    expect(await getCustomerAccount({ db, email })).toMatchObject({
      payout: change.to,
      address: "1 Main St",
    });
  });
});
