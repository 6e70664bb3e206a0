ALTER TABLE "threads" ADD COLUMN "context_order" text;--> statement-breakpoint
ALTER TABLE "threads" ADD COLUMN "customer_order" text GENERATED ALWAYS AS (coalesce(order_ref, context_order)) STORED;--> statement-breakpoint
CREATE INDEX "threads_customer_order_idx" ON "threads" USING btree ("customer_order");--> statement-breakpoint
-- Threads filed without an order whose agent has since found one (the decisions' summaries say which): their customer.
UPDATE "threads" t SET "context_order" = d.order_id
  FROM (SELECT DISTINCT ON (thread_id) thread_id, order_id FROM "decisions"
        WHERE order_id IS NOT NULL ORDER BY thread_id, created_at DESC) d
  WHERE t.id = d.thread_id AND t.order_ref IS NULL;
