ALTER TABLE "effects" ADD COLUMN "trace_id" text;--> statement-breakpoint
ALTER TABLE "effects" ADD COLUMN "trace_span_id" text;--> statement-breakpoint
-- Effects recorded before this release and not delivered yet: the trace of the thread's latest run created before the
-- effect (what the dispatcher read at each delivery until now).
UPDATE "effects" e SET ("trace_id", "trace_span_id") = (
  SELECT r."trace_id", r."trace_span_id" FROM "runs" r
  WHERE r."thread_id" = e."thread_id" AND r."created_at" <= e."created_at"
  ORDER BY r."created_at" DESC LIMIT 1
) WHERE e."delivered_at" IS NULL AND e."trace_id" IS NULL;
