-- Orders the queue specs use (e2e/support/queue.ts `lateOrders`), for a suite server on the embedded database: the
-- specs cannot write to it while the server holds it, so scripts/e2e-server.mjs seeds these before it starts.
-- Each range: first order number, count, amount in cents (as the specs ask for them); placed 45 days ago, so a
-- refund request on one is late and a person decides it.
INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
SELECT 'ORD-' || g, 'Queue Customer ORD-' || g, 'ord-' || g || '@queue.example.com', r.cents, 'EUR',
  now() - interval '45 days', 'card',
  jsonb_build_array(jsonb_build_object('sku', 'Q-1', 'name', 'Queue item', 'quantity', 1, 'unitCents', r.cents)),
  'delivered'
FROM (VALUES (7100, 1, 3900), (7110, 2, 3900), (7120, 1, 3900), (7200, 20, 4217), (7300, 10, 3713), (7700, 1, 3900), (7710, 3, 3910), (7720, 1, 3920), (7730, 1, 3930))
  AS r(first, count, cents),
  generate_series(r.first, r.first + r.count - 1) AS g
ON CONFLICT (id) DO NOTHING;
