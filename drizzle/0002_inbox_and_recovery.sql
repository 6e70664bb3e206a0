DROP INDEX "threads_updated_idx";--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "title" text;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "order_id" text;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "customer_name" text;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "amount_cents" integer;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "currency" text;--> statement-breakpoint
CREATE INDEX "decisions_pending_idx" ON "decisions" USING btree ("created_at","interrupt_id") WHERE "decisions"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "decisions_pending_action_idx" ON "decisions" USING btree ("action","created_at","interrupt_id") WHERE "decisions"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "runs_active_lease_idx" ON "runs" USING btree ("lease_expires_at") WHERE "runs"."status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "threads_status_updated_idx" ON "threads" USING btree ("status","updated_at","id");--> statement-breakpoint
CREATE INDEX "threads_updated_idx" ON "threads" USING btree ("updated_at","id");