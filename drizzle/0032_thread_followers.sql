CREATE TABLE "thread_followers" (
	"thread_id" text NOT NULL,
	"instance_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "thread_followers_thread_id_instance_id_pk" PRIMARY KEY("thread_id","instance_id")
);
--> statement-breakpoint
-- The inbox feed's wake-up carries no payload (its listeners read the feed after the last id they saw): Postgres
-- delivers one notification per transaction and channel for identical payloads, so a transaction that changes several
-- inbox rows notifies once.
CREATE OR REPLACE FUNCTION inbox_change(p_interrupt text, p_thread text, p_kind text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO inbox_changes (interrupt_id, thread_id, kind) VALUES (p_interrupt, p_thread, p_kind);
  PERFORM pg_notify('inbox_changes', '');
END;
$$;
