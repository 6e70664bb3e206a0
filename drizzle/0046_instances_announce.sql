-- An instance that comes live (registers, restarts after a stop, comes back after being counted gone, or changes the
-- formats it reads) is announced on `hitl_instances` by the database itself, whatever release it runs: every server
-- listening forgets its answer to "may I seal?" (lib/db/vault.ts keeps it 5 s) at once, so an instance of a release
-- before starting beside this one is not written what it cannot read for those seconds.
CREATE OR REPLACE FUNCTION instances_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.stopped_at IS NULL AND (TG_OP = 'INSERT' OR OLD.stopped_at IS NOT NULL
      OR OLD.seen_at < now() - interval '2 minutes' OR OLD.reads IS DISTINCT FROM NEW.reads) THEN
    PERFORM pg_notify('hitl_instances', NEW.id);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS instances_announce ON instances;
--> statement-breakpoint
CREATE TRIGGER instances_announce AFTER INSERT OR UPDATE ON instances
  FOR EACH ROW EXECUTE FUNCTION instances_announce();
