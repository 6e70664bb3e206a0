import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

/*
 * The world the agents act on: the shop's orders, the refunds and store credit paid against them, its customer
 * accounts and the changes made to them, and goodwill vouchers. The generic store (lib/db/schema) knows none of these
 * words; the money ledger's rows here name the decision receipt that authorized them.
 */

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

/** Demo shop orders the refund agent looks up (seeded). Amounts in minor units (cents). */
export const orders = pgTable(
  "orders",
  {
    id: text("id").primaryKey(),
    customerName: text("customer_name").notNull(),
    customerEmail: text("customer_email").notNull(),
    amountCents: integer("amount_cents").notNull(),
    currency: text("currency").notNull().default("EUR"),
    placedAt: timestamp("placed_at", { withTimezone: true }).notNull(),
    /** card | paypal | bank_transfer | gift_card */
    paymentMethod: text("payment_method").notNull(),
    items: jsonb("items")
      .$type<{ sku: string; name: string; quantity: number; unitCents: number }[]>()
      .notNull(),
    /** delivered | shipped | processing | cancelled */
    status: text("status").notNull(),
    /** Set by fraud screening: refunds on flagged orders always need a human. */
    flagged: boolean("flagged").notNull().default(false),
    /**
     * The payment provider's reference of what the customer paid: with Stripe, the PaymentIntent (`pi_…`) or Charge
     * (`ch_…`) a refund is made against and whose refunds are listed to reconcile one. Null: the shop did not say; a
     * Stripe refund of the order is refused for an operator (lib/delivery/connectors/stripe.ts).
     */
    paymentRef: text("payment_ref"),
    /**
     * The order's customer at Stripe (`cus_…`): store credit is added to their Stripe balance. Null: the shop did not
     * say; a store credit of the order is then an operator task, and the customer is told a person adds it.
     */
    stripeCustomer: text("stripe_customer"),
    /**
     * The customer the order is of, as a data subject (a blind index of their email, lib/db/vault.ts): their name and
     * email are sealed under that subject's key, and search finds an email by it. Null: an order written in clear
     * before its customer had a key (the sealing job gives it one).
     */
    subjectId: text("subject_id"),
    createdAt: createdAt(),
  },
  (t) => [index("orders_subject_idx").on(t.subjectId)],
);

/**
 * The words of a sealed order's customer name as a blind index (lib/db/search-terms.ts): search finds the customer's
 * threads by a name or its prefix here (an order in clear by `orders.name_tsv`). Erasure deletes the subject's rows.
 */
export const orderNames = pgTable(
  "order_names",
  {
    orderId: text("order_id")
      .primaryKey()
      .references(() => orders.id, { onDelete: "cascade" }),
    terms: text("terms").array().notNull(),
  },
  (t) => [index("order_names_terms_idx").using("gin", t.terms).with({ fastupdate: false })],
);

/**
 * Refunds authorized. `idempotency_key` is derived from the decision that authorized the refund
 * (`refund:<decision ref>`), so re-running the refund node after a resume or a crash finds its own refund, while a
 * second approved (partial) refund of the same order is a refund of its own. The sum per order never exceeds the
 * order total: it is checked with the order row locked. Paid out by the `effects` row of the same key.
 */
export const refunds = pgTable(
  "refunds",
  {
    id: text("id").primaryKey(),
    idempotencyKey: text("idempotency_key").notNull().unique(),
    orderId: text("order_id")
      .notNull()
      .references(() => orders.id),
    threadId: text("thread_id").notNull(),
    amountCents: integer("amount_cents").notNull(),
    currency: text("currency").notNull(),
    /** original_payment | store_credit */
    method: text("method").notNull(),
    /** Who approved it: the person whose decision's receipt authorized it, or "policy" for automatic approvals. */
    approvedBy: text("approved_by").notNull(),
    /** The receipt (`decision_receipts.id`) whose authorization this refund spent; null: none matched. */
    receiptId: text("receipt_id"),
    /**
     * What the refund is for, when its agent says (`store_credit:<thread>:<order>`): a second refund with the same
     * purpose is refused by the ledger whatever decision asks for it (a rollback or a fork cannot make the agent
     * forget a credit and grant it again).
     */
    purpose: text("purpose"),
    createdAt: createdAt(),
  },
  (t) => [
    index("refunds_order_idx").on(t.orderId),
    uniqueIndex("refunds_purpose_idx").on(t.purpose).where(sql`${t.purpose} IS NOT NULL`),
  ],
);

/**
 * The shop's customer accounts: what the account-change agent changes. One row per customer: its id is derived from
 * the email the shop's orders know them by (`accountIdOf`), so two changes never create two accounts; created on
 * the first change applied to it. The email column is data (sealed under the customer's key), not the key.
 */
export const customerAccounts = pgTable("customer_accounts", {
  id: text("id").primaryKey(),
  /** The account's email address (a change of the email field changes it). */
  email: text("email").notNull(),
  address: text("address"),
  payout: text("payout"),
  /**
   * The customer as a data subject (a blind index of the email the account is known by, as `id` is): its values are
   * sealed under that subject's key. Null: an account written in clear before (the sealing job seals it).
   */
  subjectId: text("subject_id"),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Account changes both reviews approved: one per approving decision (`account:<decision ref>`), applied to
 * `customer_accounts` exactly once by the `account_update` effect (`applied_at` is set in the same transaction as the
 * change itself), and only then is the customer emailed that it was made.
 */
export const accountChanges = pgTable(
  "account_changes",
  {
    id: text("id").primaryKey(),
    idempotencyKey: text("idempotency_key").notNull().unique(),
    threadId: text("thread_id").notNull(),
    /** The account, by the customer's email when the change was approved. */
    accountEmail: text("account_email").notNull(),
    customerName: text("customer_name").notNull(),
    /** address | email | payout */
    field: text("field").notNull(),
    fromValue: text("from_value"),
    toValue: text("to_value").notNull(),
    /** The receipt whose authorization this change spent; null: none matched (the effect waits for an operator). */
    receiptId: text("receipt_id"),
    appliedAt: timestamp("applied_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [index("account_changes_thread_idx").on(t.threadId)],
);

/**
 * Goodwill vouchers the shop issued: one per granting decision (`voucher:<decision ref>`), with the code the customer
 * redeems and its value. Issued in the same transaction as the email that carries the code to the customer.
 */
export const vouchers = pgTable(
  "vouchers",
  {
    id: text("id").primaryKey(),
    idempotencyKey: text("idempotency_key").notNull().unique(),
    /** What the customer types at checkout (unique). */
    code: text("code").notNull().unique(),
    threadId: text("thread_id").notNull(),
    amountCents: integer("amount_cents").notNull(),
    currency: text("currency").notNull(),
    /** Who granted it (the deciding principal's id). */
    grantedBy: text("granted_by").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("vouchers_thread_idx").on(t.threadId)],
);

export type Order = typeof orders.$inferSelect;
export type NewOrder = typeof orders.$inferInsert;
export type Refund = typeof refunds.$inferSelect;
export type Voucher = typeof vouchers.$inferSelect;
export type AccountChangeRow = typeof accountChanges.$inferSelect;
