CREATE TABLE "effects" (
	"id" text PRIMARY KEY NOT NULL,
	"idempotency_key" text NOT NULL,
	"thread_id" text NOT NULL,
	"kind" text NOT NULL,
	"record_id" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"owner" text,
	"lease_expires_at" timestamp with time zone,
	"last_error" text,
	"provider_ref" text,
	"delivered_at" timestamp with time zone,
	"resolution" text,
	"resolved_by" text,
	"resolved_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "effects_idempotency_key_unique" UNIQUE("idempotency_key")
);
--> statement-breakpoint
CREATE INDEX "effects_due_idx" ON "effects" USING btree ("next_attempt_at") WHERE "effects"."status" in ('queued', 'sending');--> statement-breakpoint
CREATE INDEX "effects_thread_idx" ON "effects" USING btree ("thread_id","created_at");--> statement-breakpoint
CREATE INDEX "refunds_order_idx" ON "refunds" USING btree ("order_id");