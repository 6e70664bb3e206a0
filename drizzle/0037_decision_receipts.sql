CREATE TABLE "decision_receipts" (
	"id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"interrupt_id" text,
	"body" jsonb NOT NULL,
	"key_id" text NOT NULL,
	"signature" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "receipt_authorizations" (
	"receipt_id" text NOT NULL,
	"idx" integer NOT NULL,
	"thread_id" text NOT NULL,
	"effect" text NOT NULL,
	"terms" jsonb NOT NULL,
	"spent_by" text,
	"spent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "receipt_authorizations_receipt_id_idx_pk" PRIMARY KEY("receipt_id","idx")
);
--> statement-breakpoint
ALTER TABLE "account_changes" ADD COLUMN "receipt_id" text;--> statement-breakpoint
ALTER TABLE "effects" ADD COLUMN "receipt_id" text;--> statement-breakpoint
ALTER TABLE "refunds" ADD COLUMN "receipt_id" text;--> statement-breakpoint
ALTER TABLE "refunds" ADD COLUMN "purpose" text;--> statement-breakpoint
CREATE INDEX "decision_receipts_thread_idx" ON "decision_receipts" USING btree ("thread_id","created_at");--> statement-breakpoint
CREATE INDEX "receipt_authorizations_thread_idx" ON "receipt_authorizations" USING btree ("thread_id","effect");--> statement-breakpoint
CREATE UNIQUE INDEX "receipt_authorizations_spent_idx" ON "receipt_authorizations" USING btree ("spent_by") WHERE "receipt_authorizations"."spent_by" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "refunds_purpose_idx" ON "refunds" USING btree ("purpose") WHERE "refunds"."purpose" IS NOT NULL;--> statement-breakpoint
-- A receipt is a fact: never changed, never deleted (as the audit trail). Its authorizations are spent once.
CREATE OR REPLACE FUNCTION decision_receipts_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'decision_receipts is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER decision_receipts_no_update_delete BEFORE UPDATE OR DELETE ON decision_receipts
  FOR EACH ROW EXECUTE FUNCTION decision_receipts_refuse_change();
--> statement-breakpoint
CREATE TRIGGER decision_receipts_no_truncate BEFORE TRUNCATE ON decision_receipts
  FOR EACH STATEMENT EXECUTE FUNCTION decision_receipts_refuse_change();
--> statement-breakpoint
-- Payments and account changes recorded before receipts existed, still to be delivered (or waiting for an operator):
-- delivered as they were authorized then (lib/runtime/runs/receipts.ts LEGACY_RECEIPT).
UPDATE effects SET receipt_id = 'legacy:before-receipts'
WHERE kind IN ('payment', 'account_update') AND status <> 'delivered' AND receipt_id IS NULL;
