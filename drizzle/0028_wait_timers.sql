-- Durable timers: a `wait_timer` question is due when its own duration is up (from when it was asked), whatever the
-- SLA policies say; the deadline sweeper answers it `fired` (as system:timer) instead of escalating it.
CREATE OR REPLACE FUNCTION decisions_set_deadline() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p sla_policies%ROWTYPE;
BEGIN
  IF NEW.action = 'wait_timer' THEN
    NEW.due_at := NEW.created_at
      + make_interval(secs => greatest(coalesce((NEW.payload->>'durationMs')::numeric, 0), 0) / 1000);
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
