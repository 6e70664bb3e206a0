CREATE TABLE "decision_claims" (
	"interrupt_id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"user_id" text NOT NULL,
	"user_label" text NOT NULL,
	"assigned_by" text,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "inbox_changes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "inbox_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"interrupt_id" text NOT NULL,
	"thread_id" text NOT NULL,
	"kind" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_targets" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"target" text NOT NULL,
	"secret" text,
	"events" jsonb NOT NULL,
	"min_amount_cents" integer,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"idempotency_key" text NOT NULL,
	"target_id" text NOT NULL,
	"event" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notifications_idempotency_key_unique" UNIQUE("idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "sla_policies" (
	"id" text PRIMARY KEY NOT NULL,
	"action" text NOT NULL,
	"min_amount_cents" integer DEFAULT 0 NOT NULL,
	"due_seconds" integer NOT NULL,
	"expiry_answer" jsonb,
	"updated_by" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "decisions_pending_action_idx";--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "due_at" timestamp with time zone DEFAULT now() + interval '1 day' NOT NULL;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "escalated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "expiry_answer" jsonb;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "expiry_error" text;--> statement-breakpoint
ALTER TABLE "decision_claims" ADD CONSTRAINT "decision_claims_interrupt_id_decisions_interrupt_id_fk" FOREIGN KEY ("interrupt_id") REFERENCES "public"."decisions"("interrupt_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "decision_claims_user_idx" ON "decision_claims" USING btree ("user_id","expires_at");--> statement-breakpoint
CREATE INDEX "inbox_changes_at_idx" ON "inbox_changes" USING btree ("at");--> statement-breakpoint
CREATE INDEX "notifications_due_idx" ON "notifications" USING btree ("next_attempt_at") WHERE "notifications"."status" = 'queued';--> statement-breakpoint
CREATE UNIQUE INDEX "sla_policies_action_amount_idx" ON "sla_policies" USING btree ("action","min_amount_cents");--> statement-breakpoint
CREATE INDEX "decisions_pending_due_idx" ON "decisions" USING btree ("due_at","interrupt_id") WHERE "decisions"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "decisions_escalated_due_idx" ON "decisions" USING btree ("due_at","interrupt_id") WHERE "decisions"."status" = 'pending' AND "decisions"."escalated_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "decisions_order_idx" ON "decisions" USING btree ("order_id");--> statement-breakpoint
CREATE INDEX "threads_order_ref_idx" ON "threads" USING btree ("order_ref");--> statement-breakpoint
CREATE INDEX "decisions_pending_action_idx" ON "decisions" USING btree ("action","due_at","interrupt_id") WHERE "decisions"."status" = 'pending';