import "server-only";
import { randomBytes, randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { AppError } from "@/lib/contract/errors";
import type { Effect } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { queueEmail } from "../db/queries/outbox";
import { spendAuthorization } from "../db/queries/receipts";
import { termsMatch } from "./authority-terms";
import { type Voucher, vouchers } from "./schema";

/** The voucher key of a granting decision: one voucher per decision, whatever re-runs it. */
export const voucherIdempotencyKey = (decisionRef: string) => `voucher:${decisionRef}`;

/** A code people can read out and type: `GW-` and eight letters or digits, no 0/O or 1/I. */
export function voucherCode(): string {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  const bytes = randomBytes(8);
  return `GW-${[...bytes].map((b) => alphabet[b % alphabet.length]).join("")}`;
}

/**
 * Issue the voucher a decision granted, and queue the email that carries its code to the customer, in one
 * transaction: the email never claims a voucher that is not recorded, and a re-run (resume, replay, recovery) finds
 * the same voucher and the same email. The voucher spends the thread's decision receipt that granted exactly this
 * amount (lib/runtime/runs/receipts.ts); with none it is refused (`forbidden:no_receipt`) and nothing is issued or sent.
 * `email` is null when there is no address to write to: the voucher is issued and the thread says so; nothing is sent.
 */
export async function issueVoucher({
  db,
  decisionRef,
  threadId,
  amountCents,
  currency,
  grantedBy,
  email,
}: {
  db: Queryable;
  decisionRef: string;
  threadId: string;
  amountCents: number;
  currency: string;
  grantedBy: string;
  email: { to: string; subject: string; body: (code: string) => string } | null;
}): Promise<{ voucher: Voucher; mail: Effect | null }> {
  const idempotencyKey = voucherIdempotencyKey(decisionRef);
  return db.transaction(async (tx) => {
    const wanted = { effect: "voucher" as const, amountCents, currency };
    const authority = await spendAuthorization({
      db: tx,
      threadId,
      effect: "voucher",
      key: idempotencyKey,
      matches: (terms) => termsMatch("voucher", terms, wanted),
    });
    if (!authority) {
      throw new AppError(
        "forbidden:no_receipt",
        `No decision on this thread granted a voucher of ${amountCents} ${currency}: nothing was issued.`,
      );
    }
    const decider = (authority.receipt.body as { by?: { id?: string } }).by?.id ?? grantedBy;
    const [inserted] = await tx
      .insert(vouchers)
      .values({
        id: randomUUID(),
        idempotencyKey,
        code: voucherCode(),
        threadId,
        amountCents,
        currency,
        grantedBy: decider,
      })
      .onConflictDoNothing({ target: vouchers.idempotencyKey })
      .returning();
    const voucher =
      inserted ?? (await tx.select().from(vouchers).where(eq(vouchers.idempotencyKey, idempotencyKey)))[0];
    if (!voucher) throw new Error(`issueVoucher: no voucher under ${idempotencyKey} after a conflict`);
    if (!email) return { voucher, mail: null };
    const { effect } = await queueEmail({
      db: tx,
      decisionRef,
      threadId,
      to: email.to,
      subject: email.subject,
      body: email.body(voucher.code),
    });
    return { voucher, mail: effect };
  });
}

/** The thread's vouchers, oldest first. */
export async function listVouchersForThread({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<Voucher[]> {
  return db.select().from(vouchers).where(eq(vouchers.threadId, threadId)).orderBy(vouchers.createdAt);
}
