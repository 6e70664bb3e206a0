-- The audit trail becomes a hash chain, and erasure of a customer's personal data becomes its one audited exception.
--
-- Chain: every row gets, at insert (trigger, under a transaction advisory lock so concurrent writers chain one after
-- the other), chain_seq = previous + 1, content_hash = sha256 of its content, and row_hash = sha256(previous row_hash
-- : chain_seq : content_hash). audit_log_verify() lists every row that breaks it (nothing = the trail verifies).
--
-- Erasure: audit_log_erase() (SECURITY DEFINER, owned by the NOLOGIN role audit_eraser) rewrites matching text in
-- actor, payload, answer and detail, after appending an `erasure` entry whose detail holds each changed row's new
-- content digest; the changed rows point at it (erased_by). chain_seq, content_hash and row_hash never change, so the
-- chain still verifies, and an erased row's content must match the digest its erasure recorded. Only that role may
-- UPDATE, only those columns; DELETE and TRUNCATE stay refused for everyone.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'audit_eraser') THEN
    CREATE ROLE audit_eraser NOLOGIN;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- another database of this cluster created it at the same moment
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_content_hash(
  p_id bigint, p_at timestamptz, p_action text, p_actor_id text, p_actor text, p_actor_role text, p_thread_id text,
  p_checkpoint_id text, p_interrupt_id text, p_payload jsonb, p_answer jsonb, p_detail jsonb, p_ip_address text
) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(convert_to(jsonb_build_array(p_id, (extract(epoch FROM p_at) * 1000000)::bigint, p_action,
    p_actor_id, p_actor, p_actor_role, p_thread_id, p_checkpoint_id, p_interrupt_id, p_payload, p_answer, p_detail,
    p_ip_address)::text, 'UTF8')), 'hex')
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_link_hash(p_prev text, p_seq bigint, p_content text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(convert_to(coalesce(p_prev, '') || ':' || p_seq || ':' || p_content, 'UTF8')), 'hex')
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  prev record;
BEGIN
  PERFORM pg_advisory_xact_lock(74056110);
  SELECT a.chain_seq, a.row_hash INTO prev FROM audit_log a WHERE a.chain_seq IS NOT NULL
    ORDER BY a.chain_seq DESC LIMIT 1;
  NEW.chain_seq := coalesce(prev.chain_seq, 0) + 1;
  NEW.content_hash := audit_log_content_hash(NEW.id, NEW.at, NEW.action, NEW.actor_id, NEW.actor, NEW.actor_role,
    NEW.thread_id, NEW.checkpoint_id, NEW.interrupt_id, NEW.payload, NEW.answer, NEW.detail, NEW.ip_address);
  NEW.row_hash := audit_log_link_hash(prev.row_hash, NEW.chain_seq, NEW.content_hash);
  NEW.erased_by := NULL;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
-- Chain the rows written before this migration, in id order (the only time the trail is updated outside erasure).
ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete;
--> statement-breakpoint
DO $$
DECLARE
  r record;
  prev text := NULL;
  n bigint := 0;
  h text;
BEGIN
  FOR r IN SELECT * FROM audit_log ORDER BY id LOOP
    n := n + 1;
    h := audit_log_content_hash(r.id, r.at, r.action, r.actor_id, r.actor, r.actor_role, r.thread_id,
      r.checkpoint_id, r.interrupt_id, r.payload, r.answer, r.detail, r.ip_address);
    prev := audit_log_link_hash(prev, n, h);
    UPDATE audit_log SET chain_seq = n, content_hash = h, row_hash = prev WHERE id = r.id;
  END LOOP;
END;
$$;
--> statement-breakpoint
ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update_delete;
--> statement-breakpoint
CREATE TRIGGER audit_log_chain_insert BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_chain();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND current_user = 'audit_eraser' AND NEW.erased_by IS NOT NULL
    AND NEW.id = OLD.id AND NEW.at = OLD.at AND NEW.action = OLD.action AND NEW.actor_id = OLD.actor_id
    AND NEW.thread_id IS NOT DISTINCT FROM OLD.thread_id AND NEW.checkpoint_id IS NOT DISTINCT FROM OLD.checkpoint_id
    AND NEW.interrupt_id IS NOT DISTINCT FROM OLD.interrupt_id AND NEW.ip_address IS NOT DISTINCT FROM OLD.ip_address
    AND NEW.chain_seq = OLD.chain_seq AND NEW.content_hash = OLD.content_hash AND NEW.row_hash = OLD.row_hash THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_redact(p_text text, p_patterns text[], p_replacements text[]) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  i int;
BEGIN
  IF p_text IS NULL THEN RETURN NULL; END IF;
  FOR i IN 1 .. coalesce(array_length(p_patterns, 1), 0) LOOP
    p_text := regexp_replace(p_text, p_patterns[i], p_replacements[i], 'gi');
  END LOOP;
  RETURN p_text;
END;
$$;
--> statement-breakpoint
-- Erase: rewrite `p_patterns` (case-insensitive regular expressions; `p_json_patterns` are the same as they appear
-- inside JSON text) with `p_replacements` in every audit row, append the `erasure` entry (actor and p_detail, which
-- must hold no personal data) and return its id.
CREATE OR REPLACE FUNCTION audit_log_erase(
  p_patterns text[], p_json_patterns text[], p_replacements text[], p_actor_id text, p_actor text, p_actor_role text,
  p_detail jsonb
) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  any_text text := array_to_string(p_patterns, '|');
  any_json text := array_to_string(p_json_patterns, '|');
  erasure_id bigint;
BEGIN
  IF coalesce(array_length(p_patterns, 1), 0) = 0 OR array_length(p_patterns, 1) <> array_length(p_json_patterns, 1)
    OR array_length(p_patterns, 1) <> array_length(p_replacements, 1) THEN
    RAISE EXCEPTION 'audit_log_erase: patterns, JSON patterns and replacements must be non-empty and of equal length';
  END IF;
  -- One statement: the UPDATE's snapshot predates the INSERT, so the erasure entry itself is never rewritten.
  WITH redacted AS (
    SELECT a.id, audit_log_redact(a.actor, p_patterns, p_replacements) AS actor,
      audit_log_redact(a.payload::text, p_json_patterns, p_replacements)::jsonb AS payload,
      audit_log_redact(a.answer::text, p_json_patterns, p_replacements)::jsonb AS answer,
      audit_log_redact(a.detail::text, p_json_patterns, p_replacements)::jsonb AS detail,
      a.at, a.action, a.actor_id, a.actor_role, a.thread_id, a.checkpoint_id, a.interrupt_id, a.ip_address
    FROM audit_log a
    WHERE a.actor ~* any_text OR a.payload::text ~* any_json OR a.answer::text ~* any_json
      OR a.detail::text ~* any_json
  ), digests AS (
    SELECT coalesce(jsonb_object_agg(r.id::text, audit_log_content_hash(r.id, r.at, r.action, r.actor_id, r.actor,
      r.actor_role, r.thread_id, r.checkpoint_id, r.interrupt_id, r.payload, r.answer, r.detail, r.ip_address)),
      '{}'::jsonb) AS erased, count(*) AS n
    FROM redacted r
  ), entry AS (
    INSERT INTO audit_log (action, actor_id, actor, actor_role, detail)
    SELECT 'erasure', p_actor_id, p_actor, p_actor_role,
      coalesce(p_detail, '{}'::jsonb) || jsonb_build_object('auditRows', d.n, 'erased', d.erased)
    FROM digests d
    RETURNING id
  ), changed AS (
    UPDATE audit_log a SET actor = r.actor, payload = r.payload, answer = r.answer, detail = r.detail,
      erased_by = (SELECT id FROM entry)
    FROM redacted r WHERE a.id = r.id
    RETURNING a.id
  )
  SELECT (SELECT id FROM entry) INTO erasure_id FROM (SELECT count(*) FROM changed) c;
  RETURN erasure_id;
END;
$$;
--> statement-breakpoint
-- Every row that breaks the chain or whose content does not match its digest (the one its erasure recorded, for an
-- erased row). No rows: the trail verifies.
CREATE OR REPLACE FUNCTION audit_log_verify() RETURNS TABLE (id bigint, chain_seq bigint, problem text)
LANGUAGE sql STABLE AS $$
  WITH r AS (
    SELECT a.*, lag(a.row_hash) OVER w AS prev_hash, lag(a.chain_seq) OVER w AS prev_seq
    FROM audit_log a WINDOW w AS (ORDER BY a.chain_seq)
  ), checked AS (
    SELECT r.id, r.chain_seq, CASE
      WHEN r.chain_seq IS NULL OR r.row_hash IS NULL THEN 'not chained'
      WHEN r.chain_seq <> coalesce(r.prev_seq, 0) + 1 THEN 'chain gap before this row'
      WHEN r.row_hash <> audit_log_link_hash(r.prev_hash, r.chain_seq, r.content_hash) THEN 'row hash mismatch'
      WHEN audit_log_content_hash(r.id, r.at, r.action, r.actor_id, r.actor, r.actor_role, r.thread_id,
          r.checkpoint_id, r.interrupt_id, r.payload, r.answer, r.detail, r.ip_address)
        IS DISTINCT FROM CASE WHEN r.erased_by IS NULL THEN r.content_hash
          ELSE (SELECT e.detail -> 'erased' ->> r.id::text FROM audit_log e
            WHERE e.id = r.erased_by AND e.action = 'erasure') END
        THEN CASE WHEN r.erased_by IS NULL THEN 'content changed' ELSE 'erased content does not match its erasure' END
    END AS problem
    FROM r
  )
  SELECT id, chain_seq, problem FROM checked WHERE problem IS NOT NULL ORDER BY chain_seq NULLS FIRST
$$;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE ON audit_log TO audit_eraser;
--> statement-breakpoint
DO $$
BEGIN
  EXECUTE format('GRANT USAGE ON SEQUENCE %s TO audit_eraser', pg_get_serial_sequence('audit_log', 'id'));
END;
$$;
--> statement-breakpoint
DO $$
DECLARE
  was_member boolean := pg_has_role(current_user, 'audit_eraser', 'MEMBER');
  fn_schema text := (SELECT n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE p.oid = 'audit_log_erase(text[], text[], text[], text, text, text, jsonb)'::regprocedure);
  could_create boolean;
BEGIN
  -- Handing the function to audit_eraser takes membership in it, and audit_eraser must be able to create in the
  -- function's schema. A migrating user that is not a superuser (a managed database's owner with CREATEROLE) gets
  -- both for this block only: afterwards it cannot act as audit_eraser, and audit_eraser cannot create anything.
  could_create := has_schema_privilege('audit_eraser', fn_schema, 'CREATE');
  IF NOT was_member THEN
    EXECUTE format('GRANT audit_eraser TO %I', current_user);
  END IF;
  IF NOT could_create THEN
    EXECUTE format('GRANT CREATE ON SCHEMA %I TO audit_eraser', fn_schema);
  END IF;
  ALTER FUNCTION audit_log_erase(text[], text[], text[], text, text, text, jsonb) OWNER TO audit_eraser;
  IF NOT could_create THEN
    EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM audit_eraser', fn_schema);
  END IF;
  REVOKE ALL ON FUNCTION audit_log_erase(text[], text[], text[], text, text, text, jsonb) FROM PUBLIC;
  -- The migrating user is the application's: it may call the erasure (and nothing else may, but superusers).
  EXECUTE format('GRANT EXECUTE ON FUNCTION audit_log_erase(text[], text[], text[], text, text, text, jsonb) TO %I',
    current_user);
  IF NOT was_member THEN
    EXECUTE format('REVOKE audit_eraser FROM %I', current_user);
  END IF;
END;
$$;
