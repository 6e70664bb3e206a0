-- Search reads stored vectors, not ones computed per row at query time: a row the recency walk tests (see
-- lib/db/queries/search.ts) costs one `@@` on a stored value instead of a to_tsvector() of the whole message. The
-- columns are generated, so an erasure that rewrites the message or the name rewrites the vector with it. They are
-- not in the Drizzle schema on purpose: declared there, every `select()` of a thread or an order would carry the
-- vector (and the Thread/Order types sent to the browser would have it).
-- fastupdate off: with it on, new rows wait in the index's pending list, which every search reads from end to end
-- (100k names after a bulk load: ~100 ms a search) until a vacuum merges it; tickets and orders arrive slowly enough
-- for each insert to update the index itself.
ALTER TABLE threads ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (to_tsvector('simple', title || ' ' || customer_message)) STORED;
--> statement-breakpoint
DROP INDEX IF EXISTS threads_search_idx;
--> statement-breakpoint
CREATE INDEX threads_search_idx ON threads USING gin (search_tsv) WITH (fastupdate = off);
--> statement-breakpoint
ALTER TABLE orders ADD COLUMN name_tsv tsvector
  GENERATED ALWAYS AS (to_tsvector('simple', customer_name)) STORED;
--> statement-breakpoint
DROP INDEX IF EXISTS orders_name_search_idx;
--> statement-breakpoint
CREATE INDEX orders_name_search_idx ON orders USING gin (name_tsv) WITH (fastupdate = off);
