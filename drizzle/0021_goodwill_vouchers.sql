CREATE TABLE "vouchers" (
	"id" text PRIMARY KEY NOT NULL,
	"idempotency_key" text NOT NULL,
	"code" text NOT NULL,
	"thread_id" text NOT NULL,
	"amount_cents" integer NOT NULL,
	"currency" text NOT NULL,
	"granted_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vouchers_idempotency_key_unique" UNIQUE("idempotency_key"),
	CONSTRAINT "vouchers_code_unique" UNIQUE("code")
);
--> statement-breakpoint
CREATE INDEX "vouchers_thread_idx" ON "vouchers" USING btree ("thread_id");