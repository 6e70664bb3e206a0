CREATE TABLE "order_names" (
	"order_id" text PRIMARY KEY NOT NULL,
	"terms" text[] NOT NULL
);
--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "subject_id" text;--> statement-breakpoint
ALTER TABLE "order_names" ADD CONSTRAINT "order_names_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "order_names_terms_idx" ON "order_names" USING gin ("terms") WITH (fastupdate=false);--> statement-breakpoint
CREATE INDEX "orders_subject_idx" ON "orders" USING btree ("subject_id");--> statement-breakpoint
-- A sealed name has no words to index (its words are in order_names): as threads.search_tsv in 0043.
ALTER TABLE orders DROP COLUMN name_tsv;
--> statement-breakpoint
ALTER TABLE orders ADD COLUMN name_tsv tsvector
  GENERATED ALWAYS AS (CASE WHEN customer_name LIKE 'sealed:v1:%' THEN NULL
    ELSE to_tsvector('simple', customer_name) END) STORED;
--> statement-breakpoint
CREATE INDEX orders_name_search_idx ON orders USING gin (name_tsv) WITH (fastupdate = off);
