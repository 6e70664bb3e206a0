ALTER TABLE "decisions" ADD COLUMN "wait_ms" bigint;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "outcome" text;--> statement-breakpoint
-- Issue 49: a decision's payload and answer are stored sealed under the thread's subject key. What the database itself
-- reads of them moves to plain columns: the outcome word (metrics), a wait timer's duration (the deadline trigger).
UPDATE "decisions" SET "outcome" = coalesce(CASE WHEN "resume_status" = 'cancelled' THEN 'cancelled' END,
  "answer"->>'decision', "answer"->>'choice', 'answered')
WHERE "resolved_at" IS NOT NULL;--> statement-breakpoint
UPDATE "decisions" SET "wait_ms" = greatest(coalesce(("payload"->>'durationMs')::numeric, 0), 0)::bigint
WHERE "action" = 'wait_timer' AND "payload" ->> '$sealed' IS NULL;--> statement-breakpoint
CREATE OR REPLACE FUNCTION decisions_set_deadline() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p sla_policies%ROWTYPE;
BEGIN
  IF NEW.action = 'wait_timer' THEN
    NEW.due_at := NEW.created_at + make_interval(secs => greatest(coalesce(NEW.wait_ms::numeric,
      CASE WHEN NEW.payload ->> '$sealed' IS NULL THEN (NEW.payload->>'durationMs')::numeric END, 0), 0) / 1000);
    NEW.expiry_answer := NULL;
    RETURN NEW;
  END IF;
  SELECT * INTO p FROM sla_policies
    WHERE (action = NEW.action OR action = '*') AND min_amount_cents <= coalesce(NEW.amount_cents, 0)
    ORDER BY (action = '*'), min_amount_cents DESC
    LIMIT 1;
  IF FOUND THEN
    NEW.due_at := NEW.created_at + make_interval(secs => p.due_seconds);
    NEW.expiry_answer := p.expiry_answer;
  ELSE
    NEW.due_at := NEW.created_at + interval '1 day';
  END IF;
  RETURN NEW;
END;
$$;
