CREATE TABLE "queue_samples" (
	"at" timestamp with time zone PRIMARY KEY NOT NULL,
	"pending" integer NOT NULL,
	"oldest_age_seconds" integer NOT NULL,
	"pending_by_action" jsonb NOT NULL,
	"failed_threads" integer NOT NULL,
	"failed_effects" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "trace_id" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "trace_span_id" text;--> statement-breakpoint
CREATE INDEX "decisions_resolved_at_idx" ON "decisions" USING btree ("resolved_at") WHERE "decisions"."resolved_at" is not null;--> statement-breakpoint
CREATE INDEX "runs_failed_idx" ON "runs" USING btree ("finished_at") WHERE "runs"."status" = 'failed';