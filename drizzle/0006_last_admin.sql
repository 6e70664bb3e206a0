-- There is always an enabled admin: an UPDATE or DELETE that takes away the last one is refused, whoever asks (a
-- route, a script, a console). Changes that remove an enabled admin are serialized on one transaction advisory lock
-- (7311842002, also taken by the admin API before it reads), so two admins demoting each other at once cannot both
-- see the other still there: the second waits for the first to commit, then counts again. SQLSTATE HL001 (a class
-- of our own) lets the application map the refusal to 409 conflict:last_admin. Relies on READ COMMITTED: the count
-- after the lock takes a fresh snapshot.
CREATE OR REPLACE FUNCTION auth_users_keep_last_admin() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7311842002);
  IF NOT EXISTS (
    SELECT 1 FROM auth_users WHERE role = 'admin' AND NOT disabled AND id <> OLD.id
  ) THEN
    RAISE EXCEPTION 'refused: this % would leave no enabled admin (the last enabled admin must stay)', TG_OP
      USING ERRCODE = 'HL001';
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER auth_users_last_admin_update BEFORE UPDATE OF role, disabled ON auth_users
  FOR EACH ROW
  WHEN (OLD.role = 'admin' AND NOT OLD.disabled AND (NEW.role IS DISTINCT FROM 'admin' OR NEW.disabled))
  EXECUTE FUNCTION auth_users_keep_last_admin();
--> statement-breakpoint
CREATE TRIGGER auth_users_last_admin_delete BEFORE DELETE ON auth_users
  FOR EACH ROW
  WHEN (OLD.role = 'admin' AND NOT OLD.disabled)
  EXECUTE FUNCTION auth_users_keep_last_admin();
