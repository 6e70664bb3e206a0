CREATE TABLE "thread_search" (
	"thread_id" text PRIMARY KEY NOT NULL,
	"terms" text[] NOT NULL
);
--> statement-breakpoint
ALTER TABLE "thread_search" ADD CONSTRAINT "thread_search_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "thread_search_terms_idx" ON "thread_search" USING gin ("terms") WITH (fastupdate=false);--> statement-breakpoint
-- A sealed ticket (title and message `sealed:v1:` + base64, lib/db/vault.ts) has no words to index: its vector would
-- hold the envelope's tokens, and a search for "sealed" would find every sealed thread. Its words are in
-- thread_search instead. A generated column's expression cannot be altered (before Postgres 17): dropped and added.
ALTER TABLE threads DROP COLUMN search_tsv;
--> statement-breakpoint
ALTER TABLE threads ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (CASE WHEN customer_message LIKE 'sealed:v1:%' THEN NULL
    ELSE to_tsvector('simple', title || ' ' || customer_message) END) STORED;
--> statement-breakpoint
CREATE INDEX threads_search_idx ON threads USING gin (search_tsv) WITH (fastupdate = off);
