-- The audit chain leaves the commit path (issue 31). Until now an insert trigger took one advisory lock for the whole
-- cluster and chained each row as it was written, so every audited transaction ran one at a time from its first audit
-- insert to its commit. Now an audit row is inserted plainly (no trigger, no lock, nothing shared between writers),
-- and the chain lives beside the trail, in audit_chain (append-only too):
--
-- * The chainer, audit_log_chain_pending(), appends the links of committed rows after the fact, in id order, one
--   chainer at a time (it holds the one audit_chain_state row, and nothing else waits for that row), one statement
--   per batch. Every server runs it every AUDIT_CHAIN_MS; verifying the trail runs it first.
-- * Which rows are new: those above the watermark with no link yet. The watermark moves to the highest id handed out
--   at an earlier pass once every transaction that was running then has ended (pg_locks' virtualxid locks), so a
--   row whose transaction commits late is still found, and the search stays as short as the rows since.
-- * audit_log_verify(p_chain_within) reports a row changed (its digest, or the one its erasure recorded), deleted,
--   reordered or forged in the chain, a link without its row, and a row not chained within p_chain_within of its
--   insert. audit_log_verify() uses the documented delay, 5 minutes.
CREATE TABLE "audit_chain" (
	"audit_id" bigint PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"content_hash" text NOT NULL,
	"row_hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_chain_state" (
	"id" integer PRIMARY KEY NOT NULL,
	"head_seq" bigint DEFAULT 0 NOT NULL,
	"head_hash" text,
	"watermark" bigint DEFAULT 0 NOT NULL,
	"candidate" bigint,
	"candidate_running" text[],
	"chained_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "audit_chain_seq_idx" ON "audit_chain" USING btree ("seq");--> statement-breakpoint
DROP TRIGGER IF EXISTS audit_log_chain_insert ON audit_log;
--> statement-breakpoint
DROP FUNCTION IF EXISTS audit_log_chain();
--> statement-breakpoint
-- The links the insert trigger wrote move over as they are. The watermark starts at 0: the first passes look at every
-- row once, so a row written while this migration ran is chained too.
INSERT INTO audit_chain (audit_id, seq, content_hash, row_hash)
  SELECT id, chain_seq, content_hash, row_hash FROM audit_log WHERE chain_seq IS NOT NULL;
--> statement-breakpoint
INSERT INTO audit_chain_state (id, head_seq, head_hash, watermark)
  SELECT 1, coalesce(max(seq), 0), (SELECT c.row_hash FROM audit_chain c ORDER BY c.seq DESC LIMIT 1), 0
  FROM audit_chain;
--> statement-breakpoint
DROP INDEX "audit_log_chain_seq_idx";--> statement-breakpoint
ALTER TABLE "audit_log" DROP COLUMN "chain_seq";--> statement-breakpoint
ALTER TABLE "audit_log" DROP COLUMN "content_hash";--> statement-breakpoint
ALTER TABLE "audit_log" DROP COLUMN "row_hash";
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The erasure: personal data rewritten, the row pointing at its erasure entry, nothing else of it changed.
  IF TG_OP = 'UPDATE' AND current_user = 'audit_eraser' AND NEW.erased_by IS NOT NULL
    AND NEW.id = OLD.id AND NEW.at = OLD.at AND NEW.action = OLD.action AND NEW.actor_id = OLD.actor_id
    AND NEW.thread_id IS NOT DISTINCT FROM OLD.thread_id AND NEW.checkpoint_id IS NOT DISTINCT FROM OLD.checkpoint_id
    AND NEW.interrupt_id IS NOT DISTINCT FROM OLD.interrupt_id AND NEW.ip_address IS NOT DISTINCT FROM OLD.ip_address
  THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_chain_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_chain is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER audit_chain_no_update_delete BEFORE UPDATE OR DELETE ON audit_chain
  FOR EACH ROW EXECUTE FUNCTION audit_chain_refuse_change();
--> statement-breakpoint
CREATE TRIGGER audit_chain_no_truncate BEFORE TRUNCATE ON audit_chain
  FOR EACH STATEMENT EXECUTE FUNCTION audit_chain_refuse_change();
--> statement-breakpoint
-- One link, as an aggregate's step: folded over rows in chain order (a running window) it gives each row's row_hash from
-- the one before it; p_start is the chain's head before the batch.
CREATE OR REPLACE FUNCTION audit_log_link_step(p_state text, p_start text, p_seq bigint, p_content text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT audit_log_link_hash(CASE WHEN p_state IS NULL THEN p_start ELSE p_state END, p_seq, p_content)
$$;
--> statement-breakpoint
CREATE AGGREGATE audit_log_link(text, bigint, text) (SFUNC = audit_log_link_step, STYPE = text);
--> statement-breakpoint
-- Chain up to p_limit committed rows that have no link yet, in id order, after the head; returns how many. p_wait
-- false: when another chainer is at work, return -1 at once instead of waiting for it.
CREATE OR REPLACE FUNCTION audit_log_chain_pending(p_limit integer DEFAULT 5000, p_wait boolean DEFAULT true)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  st audit_chain_state%ROWTYPE;
  safe boolean;
  n integer;
  new_seq bigint;
  new_hash text;
  seen bigint;
  running text[];
BEGIN
  IF p_wait THEN
    SELECT * INTO st FROM audit_chain_state WHERE id = 1 FOR UPDATE;
  ELSE
    SELECT * INTO st FROM audit_chain_state WHERE id = 1 FOR UPDATE SKIP LOCKED;
  END IF;
  IF NOT FOUND THEN
    RETURN -1;
  END IF;
  -- Asked before the batch reads: a transaction of the candidate's that has ended is visible to the batch.
  safe := st.candidate IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM pg_locks l WHERE l.locktype = 'virtualxid' AND l.virtualxid = ANY (st.candidate_running));
  WITH batch AS (
    SELECT a.id, st.head_seq + row_number() OVER (ORDER BY a.id) AS seq,
      audit_log_content_hash(a.id, a.at, a.action, a.actor_id, a.actor, a.actor_role, a.thread_id, a.checkpoint_id,
        a.interrupt_id, a.payload, a.answer, a.detail, a.ip_address) AS digest
    FROM (SELECT * FROM audit_log x WHERE x.id > st.watermark
      AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.audit_id = x.id) ORDER BY x.id LIMIT p_limit) a
  ), linked AS (
    SELECT b.id, b.seq, b.digest, audit_log_link(st.head_hash, b.seq, b.digest) OVER (ORDER BY b.seq) AS row_hash
    FROM batch b
  ), appended AS (
    INSERT INTO audit_chain (audit_id, seq, content_hash, row_hash)
    SELECT l.id, l.seq, l.digest, l.row_hash FROM linked l
    RETURNING seq, row_hash
  )
  SELECT count(*)::integer, max(a.seq), (array_agg(a.row_hash ORDER BY a.seq DESC))[1]
  INTO n, new_seq, new_hash FROM appended a;
  IF n > 0 THEN
    st.head_seq := new_seq;
    st.head_hash := new_hash;
    st.chained_at := now();
  END IF;
  IF n < p_limit THEN
    -- Caught up with every committed row: the candidate becomes the watermark once its transactions have all ended,
    -- and a new candidate is taken — the highest id handed out (read first), then the transactions running now.
    IF safe THEN
      st.watermark := greatest(st.watermark, st.candidate);
    END IF;
    EXECUTE format('SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM %s',
      pg_get_serial_sequence('audit_log', 'id')) INTO seen;
    running := ARRAY(SELECT l.virtualxid FROM pg_locks l
      WHERE l.locktype = 'virtualxid' AND l.granted AND l.pid IS DISTINCT FROM pg_backend_pid());
    IF safe OR st.candidate IS NULL THEN
      st.candidate := seen;
      st.candidate_running := running;
    END IF;
  END IF;
  UPDATE audit_chain_state SET head_seq = st.head_seq, head_hash = st.head_hash, watermark = st.watermark,
    candidate = st.candidate, candidate_running = st.candidate_running, chained_at = st.chained_at
  WHERE id = 1;
  RETURN n;
END;
$$;
--> statement-breakpoint
DROP FUNCTION IF EXISTS audit_log_verify();
--> statement-breakpoint
-- Every problem with the trail and its chain: a gap or a forged link in the chain, a link whose row is gone, a row whose
-- content no longer matches its digest (the one its erasure recorded, for an erased row), and a row not chained within
-- p_chain_within of its insert.
CREATE OR REPLACE FUNCTION audit_log_verify(p_chain_within interval)
RETURNS TABLE (id bigint, chain_seq bigint, problem text) LANGUAGE sql STABLE AS $$
  WITH links AS (
    SELECT c.*, lag(c.row_hash) OVER w AS prev_hash, lag(c.seq) OVER w AS prev_seq
    FROM audit_chain c WINDOW w AS (ORDER BY c.seq)
  ), checked AS (
    SELECT l.audit_id AS id, l.seq AS chain_seq, CASE
      WHEN l.seq <> coalesce(l.prev_seq, 0) + 1 THEN 'chain gap before this row'
      WHEN l.row_hash <> audit_log_link_hash(l.prev_hash, l.seq, l.content_hash) THEN 'row hash mismatch'
      WHEN a.id IS NULL THEN 'chained row missing'
      WHEN audit_log_content_hash(a.id, a.at, a.action, a.actor_id, a.actor, a.actor_role, a.thread_id,
          a.checkpoint_id, a.interrupt_id, a.payload, a.answer, a.detail, a.ip_address)
        IS DISTINCT FROM CASE WHEN a.erased_by IS NULL THEN l.content_hash
          ELSE (SELECT e.detail -> 'erased' ->> a.id::text FROM audit_log e
            WHERE e.id = a.erased_by AND e.action = 'erasure') END
        THEN CASE WHEN a.erased_by IS NULL THEN 'content changed' ELSE 'erased content does not match its erasure' END
    END AS problem
    FROM links l LEFT JOIN audit_log a ON a.id = l.audit_id
    UNION ALL
    SELECT a.id, NULL, 'not chained in time'
    FROM audit_log a
    WHERE a.at < now() - p_chain_within AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.audit_id = a.id)
  )
  SELECT id, chain_seq, problem FROM checked WHERE problem IS NOT NULL ORDER BY chain_seq NULLS FIRST, id
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_verify() RETURNS TABLE (id bigint, chain_seq bigint, problem text)
LANGUAGE sql STABLE AS $$
  SELECT * FROM audit_log_verify(interval '5 minutes')
$$;
