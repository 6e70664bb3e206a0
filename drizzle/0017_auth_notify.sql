-- Any change to sessions or users (sign-out, a revoked session, a user disabled or given another role — by the app,
-- the CLI or plain SQL) announces itself on `hitl_auth`, delivered at commit: servers empty their in-process cache of
-- verified sessions when they hear it (lib/auth/session-cache.ts). Per statement, not per row: one notice will do.
CREATE OR REPLACE FUNCTION hitl_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hitl_auth', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER auth_sessions_changed AFTER UPDATE OR DELETE OR TRUNCATE ON auth_sessions
  FOR EACH STATEMENT EXECUTE FUNCTION hitl_auth_changed();
--> statement-breakpoint
CREATE TRIGGER auth_users_changed AFTER UPDATE OR DELETE OR TRUNCATE ON auth_users
  FOR EACH STATEMENT EXECUTE FUNCTION hitl_auth_changed();
