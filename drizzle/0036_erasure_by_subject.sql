-- Erasure by subject, not by text search (issue 49, first step). audit_log_erase() rewrote a regular expression in the
-- actor, payload, answer and detail of *every* audit row: erasing the customer "Ann" rewrote the staff label
-- shannon@… and any row that held "ann" inside a longer word. It is dropped, and with it audit_log_redact().
--
-- audit_log_erase_rows() takes the rows to change and their new payload / answer / detail, computed by the application
-- (whole words of the subject's values, inside JSON string values only), and refuses any row that is not of the
-- subject's threads. The actor (who did it) is never changed. As before it runs as the NOLOGIN role audit_eraser,
-- appends the `erasure` entry first with each changed row's new content digest, and points the changed rows at it, so
-- audit_log_verify() still verifies the trail.
DROP FUNCTION IF EXISTS audit_log_erase(text[], text[], text[], text, text, text, jsonb);
--> statement-breakpoint
DROP FUNCTION IF EXISTS audit_log_redact(text, text[], text[]);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_log_erase_rows(
  p_thread_ids text[], p_rows jsonb, p_actor_id text, p_actor text, p_actor_role text, p_detail jsonb
) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  erasure_id bigint;
  outside bigint;
  n_rows integer;
  n_ids integer;
BEGIN
  IF jsonb_typeof(p_rows) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'audit_log_erase_rows: p_rows must be a JSON array of {id, payload?, answer?, detail?}';
  END IF;
  SELECT count(*), count(DISTINCT (r ->> 'id')) INTO n_rows, n_ids FROM jsonb_array_elements(p_rows) r;
  IF n_rows <> n_ids THEN
    RAISE EXCEPTION 'audit_log_erase_rows: a row is listed twice';
  END IF;
  -- Only rows of the subject's threads: never another customer's, never a row about no thread.
  SELECT (r ->> 'id')::bigint INTO outside FROM jsonb_array_elements(p_rows) r
  WHERE NOT EXISTS (SELECT 1 FROM audit_log a
    WHERE a.id = (r ->> 'id')::bigint AND a.thread_id = ANY (coalesce(p_thread_ids, '{}'::text[])))
  LIMIT 1;
  IF outside IS NOT NULL THEN
    RAISE EXCEPTION 'audit_log_erase_rows: audit row % is not of the subject''s threads', outside
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  -- One statement: the UPDATE's snapshot predates the INSERT, so the erasure entry itself is never rewritten.
  WITH redacted AS (
    SELECT a.id, a.at, a.action, a.actor_id, a.actor, a.actor_role, a.thread_id, a.checkpoint_id, a.interrupt_id,
      a.ip_address,
      CASE WHEN r ? 'payload' THEN r -> 'payload' ELSE a.payload END AS payload,
      CASE WHEN r ? 'answer' THEN r -> 'answer' ELSE a.answer END AS answer,
      CASE WHEN r ? 'detail' THEN r -> 'detail' ELSE a.detail END AS detail
    FROM jsonb_array_elements(p_rows) r JOIN audit_log a ON a.id = (r ->> 'id')::bigint
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
    UPDATE audit_log a SET payload = r.payload, answer = r.answer, detail = r.detail,
      erased_by = (SELECT id FROM entry)
    FROM redacted r WHERE a.id = r.id
    RETURNING a.id
  )
  SELECT (SELECT id FROM entry) INTO erasure_id FROM (SELECT count(*) FROM changed) c;
  RETURN erasure_id;
END;
$$;
--> statement-breakpoint
DO $$
DECLARE
  was_member boolean := pg_has_role(current_user, 'audit_eraser', 'MEMBER');
  fn_schema text := (SELECT n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE p.oid = 'audit_log_erase_rows(text[], jsonb, text, text, text, jsonb)'::regprocedure);
  could_create boolean;
BEGIN
  -- As in audit_chain_erasure: handing the function to audit_eraser takes membership in it and its right to create in
  -- the function's schema, for this block only.
  could_create := has_schema_privilege('audit_eraser', fn_schema, 'CREATE');
  IF NOT was_member THEN
    EXECUTE format('GRANT audit_eraser TO %I', current_user);
  END IF;
  IF NOT could_create THEN
    EXECUTE format('GRANT CREATE ON SCHEMA %I TO audit_eraser', fn_schema);
  END IF;
  ALTER FUNCTION audit_log_erase_rows(text[], jsonb, text, text, text, jsonb) OWNER TO audit_eraser;
  IF NOT could_create THEN
    EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM audit_eraser', fn_schema);
  END IF;
  REVOKE ALL ON FUNCTION audit_log_erase_rows(text[], jsonb, text, text, text, jsonb) FROM PUBLIC;
  EXECUTE format('GRANT EXECUTE ON FUNCTION audit_log_erase_rows(text[], jsonb, text, text, text, jsonb) TO %I',
    current_user);
  IF NOT was_member THEN
    EXECUTE format('REVOKE audit_eraser FROM %I', current_user);
  END IF;
END;
$$;
--> statement-breakpoint
-- The trail's one permitted change keeps who did it: the actor's label and role stay as written, too.
CREATE OR REPLACE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND current_user = 'audit_eraser' AND NEW.erased_by IS NOT NULL
    AND NEW.id = OLD.id AND NEW.at = OLD.at AND NEW.action = OLD.action AND NEW.actor_id = OLD.actor_id
    AND NEW.actor IS NOT DISTINCT FROM OLD.actor AND NEW.actor_role IS NOT DISTINCT FROM OLD.actor_role
    AND NEW.thread_id IS NOT DISTINCT FROM OLD.thread_id AND NEW.checkpoint_id IS NOT DISTINCT FROM OLD.checkpoint_id
    AND NEW.interrupt_id IS NOT DISTINCT FROM OLD.interrupt_id AND NEW.ip_address IS NOT DISTINCT FROM OLD.ip_address
  THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
