import "server-only";
import { randomUUID } from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Effect } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { insertEffect } from "../db/queries/effects";
import { queueEmail } from "../db/queries/outbox";
import { spendAuthorization } from "../db/queries/receipts";
import {
  customerSubjectId,
  type KeySource,
  openThreadText,
  recordSealer,
  rowSealer,
  subjectOpener,
} from "../db/vault";
import { accountIdOf, termsMatch } from "./authority-terms";
import { type AccountChangeRow, accountChanges, customerAccounts } from "./schema";

export { accountIdOf };

/** The account fields a change may set. */
export type AccountField = "address" | "email" | "payout";
const FIELD_NAMES: Record<AccountField, string> = {
  address: "postal address",
  email: "email address",
  payout: "payout account",
};

/** The change key of an approving decision: one change per decision, whatever re-runs it. */
export const accountChangeKey = (decisionRef: string) => `account:${decisionRef}`;

/**
 * Record a change both reviews approved, and its `account_update` effect, in one transaction (idempotent by the
 * decision): nothing is changed yet — the dispatcher applies it (`applyAccountChange`) and only then emails the
 * customer that it was made.
 */
export async function recordAccountChange({
  db,
  decisionRef,
  threadId,
  accountEmail,
  customerName,
  field,
  from,
  to,
}: {
  db: Queryable;
  decisionRef: string;
  threadId: string;
  accountEmail: string;
  customerName: string;
  field: AccountField;
  from: string | null;
  to: string;
}): Promise<{ change: AccountChangeRow; effect: Effect }> {
  const idempotencyKey = accountChangeKey(decisionRef);
  return db.transaction(async (tx) => {
    // The change spends the thread's review receipt that approved exactly this value for this account's field; with
    // none, it is recorded held (its effect failed, an operator task) and never applied.
    const wanted = { effect: "account_change" as const, accountEmail, field, to };
    const authority = await spendAuthorization({
      db: tx,
      threadId,
      effect: "account_change",
      key: idempotencyKey,
      matches: (terms) => termsMatch("account_change", terms, wanted),
    });
    // The customer's words (their address, email, payout account, name) sealed under the thread's key.
    const sealer = await rowSealer(tx, threadId, "refuse", "sealed-records");
    const [inserted] = await tx
      .insert(accountChanges)
      .values({
        id: randomUUID(),
        idempotencyKey,
        threadId,
        accountEmail: sealer.text(accountEmail),
        customerName: sealer.text(customerName),
        field,
        fromValue: sealer.text(from),
        toValue: sealer.text(to),
        receiptId: authority?.receipt.id ?? null,
      })
      .onConflictDoNothing({ target: accountChanges.idempotencyKey })
      .returning();
    const stored =
      inserted ??
      (await tx.select().from(accountChanges).where(eq(accountChanges.idempotencyKey, idempotencyKey)))[0];
    const change = stored && (await openChange(tx, stored));
    if (!change) throw new Error(`recordAccountChange: no change under ${idempotencyKey} after a conflict`);
    const effect = await insertEffect({
      db: tx,
      intent: {
        idempotencyKey,
        threadId,
        kind: "account_update",
        recordId: change.id,
        receiptId: change.receiptId,
        payload: { changeId: change.id, field, from, to, account: accountEmail },
        ...(change.receiptId
          ? {}
          : {
              held: `forbidden:no_receipt: no review on this thread approved this ${field} for this account; held for an operator, not applied`,
            }),
      },
    });
    return { change, effect };
  });
}

/**
 * Apply a recorded change to the customer's account, exactly once: the change is marked applied and the account
 * written in one transaction (a second delivery finds it applied and changes nothing), and the email telling the
 * customer it was made is queued in that same transaction — never before. Returns whether this call applied it.
 */
export async function applyAccountChange({
  db,
  changeId,
}: {
  db: Queryable;
  changeId: string;
}): Promise<{ applied: boolean; change: AccountChangeRow }> {
  return db.transaction(async (tx) => {
    const [applied] = await tx
      .update(accountChanges)
      .set({ appliedAt: sql`now()` })
      .where(and(eq(accountChanges.id, changeId), isNull(accountChanges.appliedAt)))
      .returning();
    if (!applied) {
      const [known] = await tx.select().from(accountChanges).where(eq(accountChanges.id, changeId));
      if (!known) throw new Error(`applyAccountChange: no change ${changeId}`);
      return { applied: false, change: await openChange(tx, known) };
    }
    const change = await openChange(tx, applied);
    const field = change.field as AccountField;
    const id = accountIdOf(change.accountEmail);
    // The account is the customer's record: sealed under their key (their subject, by the email it is known by).
    const subjectId = customerSubjectId(change.accountEmail);
    const sealer = await recordSealer(tx, subjectId);
    const seal = (text: string) => (sealer ? sealer.text(text) : text);
    const value = { [field]: seal(change.toValue), subjectId, updatedAt: sql`now()` };
    await tx
      .insert(customerAccounts)
      .values({ id, email: seal(change.accountEmail), ...value })
      .onConflictDoUpdate({ target: customerAccounts.id, set: value });
    const to = field === "email" ? change.toValue : change.accountEmail;
    await queueEmail({
      db: tx,
      decisionRef: `account-change/${change.id}`,
      threadId: change.threadId,
      to,
      subject: `Your ${FIELD_NAMES[field]}`,
      body: `Hello ${change.customerName},\n\nYour ${FIELD_NAMES[field]} has been updated as you asked.\n\nBest,\nSupport`,
    });
    return { applied: true, change };
  });
}

/** A customer's account, by the email the orders know them by, its values opened. */
export async function getCustomerAccount({ db, email }: { db: Queryable; email: string }) {
  const [row] = await db
    .select()
    .from(customerAccounts)
    .where(eq(customerAccounts.id, accountIdOf(email)));
  if (!row) return row;
  const opener = await subjectOpener(db, [row.subjectId]);
  const open = (text: string | null) => (text === null ? null : opener(row.subjectId, text));
  return {
    ...row,
    email: opener(row.subjectId, row.email),
    address: open(row.address),
    payout: open(row.payout),
  };
}

/** A recorded change with the customer's words opened (sealed under its thread's key). */
async function openChange(db: KeySource, row: AccountChangeRow): Promise<AccountChangeRow> {
  const open = (text: string) => openThreadText(db, row.threadId, text);
  return {
    ...row,
    accountEmail: await open(row.accountEmail),
    customerName: await open(row.customerName),
    fromValue: row.fromValue === null ? null : await open(row.fromValue),
    toValue: await open(row.toValue),
  };
}

/** The thread's recorded account changes, oldest first. */
export async function listAccountChangesForThread({ db, threadId }: { db: Queryable; threadId: string }) {
  const rows = await db
    .select()
    .from(accountChanges)
    .where(eq(accountChanges.threadId, threadId))
    .orderBy(accountChanges.createdAt);
  return Promise.all(rows.map((row) => openChange(db, row)));
}
