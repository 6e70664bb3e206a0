ALTER TABLE "decisions" DROP CONSTRAINT "decisions_thread_id_threads_id_fk";
--> statement-breakpoint
ALTER TABLE "threads" ADD COLUMN "events_compacted_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "chain_seq" bigint;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "content_hash" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "row_hash" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "erased_by" bigint;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_log_chain_seq_idx" ON "audit_log" USING btree ("chain_seq");