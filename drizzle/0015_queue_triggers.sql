-- Deadlines: a decision is due after the policy that matches its action and amount (the highest matching minimum,
-- an action's own policy before the `*` one). The default `*` policy gives every kind a deadline of one day.
INSERT INTO sla_policies (id, action, min_amount_cents, due_seconds) VALUES ('default', '*', 0, 86400)
  ON CONFLICT DO NOTHING;
--> statement-breakpoint
UPDATE decisions SET due_at = created_at + interval '1 day' WHERE status = 'pending';
--> statement-breakpoint
CREATE OR REPLACE FUNCTION decisions_set_deadline() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p sla_policies%ROWTYPE;
BEGIN
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
--> statement-breakpoint
CREATE TRIGGER decisions_deadline BEFORE INSERT ON decisions
  FOR EACH ROW EXECUTE FUNCTION decisions_set_deadline();
--> statement-breakpoint
-- The inbox change feed: every change that adds, removes or re-labels an inbox row, announced after commit.
CREATE OR REPLACE FUNCTION inbox_change(p_interrupt text, p_thread text, p_kind text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  new_id integer;
BEGIN
  INSERT INTO inbox_changes (interrupt_id, thread_id, kind) VALUES (p_interrupt, p_thread, p_kind)
    RETURNING id INTO new_id;
  PERFORM pg_notify('inbox_changes', new_id::text);
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION decisions_inbox_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.status = 'pending' THEN PERFORM inbox_change(NEW.interrupt_id, NEW.thread_id, 'raised'); END IF;
  ELSIF OLD.status = 'pending' AND NEW.status <> 'pending' THEN
    -- A decided item's claim is released with it (its own change row follows this one).
    PERFORM inbox_change(NEW.interrupt_id, NEW.thread_id, 'decided');
    DELETE FROM decision_claims WHERE interrupt_id = NEW.interrupt_id;
  ELSIF OLD.escalated_at IS NULL AND NEW.escalated_at IS NOT NULL THEN
    PERFORM inbox_change(NEW.interrupt_id, NEW.thread_id, 'escalated');
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER decisions_inbox_feed AFTER INSERT OR UPDATE ON decisions
  FOR EACH ROW EXECUTE FUNCTION decisions_inbox_change();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION claims_inbox_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM inbox_change(OLD.interrupt_id, OLD.thread_id, 'released');
  ELSIF TG_OP = 'INSERT' OR OLD.user_id <> NEW.user_id THEN
    PERFORM inbox_change(NEW.interrupt_id, NEW.thread_id, 'claimed');
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER decision_claims_inbox_feed AFTER INSERT OR UPDATE OR DELETE ON decision_claims
  FOR EACH ROW EXECUTE FUNCTION claims_inbox_change();
--> statement-breakpoint
-- Search: the customer's message and the title (full text, the 'simple' configuration: names and order numbers are
-- not English words), customer names, and emails by exact match.
CREATE INDEX threads_search_idx ON threads USING gin (to_tsvector('simple', title || ' ' || customer_message));
--> statement-breakpoint
CREATE INDEX orders_email_idx ON orders (lower(customer_email));
--> statement-breakpoint
CREATE INDEX orders_name_search_idx ON orders USING gin (to_tsvector('simple', customer_name));
--> statement-breakpoint
CREATE INDEX decisions_customer_search_idx ON decisions USING gin (to_tsvector('simple', coalesce(customer_name, '')));
