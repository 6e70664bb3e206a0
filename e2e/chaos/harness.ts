import { verifyEvents } from "@ag-ui/client";
import type { BaseEvent } from "@ag-ui/core";
import { from, lastValueFrom, toArray } from "rxjs";
import { openThreadJson } from "@/lib/db/vault";
import { createTicket } from "../api/client";
import { prepareDatabase } from "../api/setup";
import { type PaymentFaults, startFakePaymentProvider } from "../support/fake-payment";
import { type StripeFaults, startFakeStripe } from "../support/fake-stripe";
import { freePort, startTestServer, type TestServer } from "../support/server";
import { type SmtpFaults, startTestSmtpServer } from "../support/smtp";
import { driveThread, type Observer, type Target } from "./driver";
import { countProviderDeliveries, type EffectCounts, waitForEffectsToSettle } from "./effects";

export interface ChaosOptions {
  kills: number;
  threads: number;
  /** Faults the fake payment provider and the SMTP server inject into every delivery attempt (none by default). */
  faults?: { payment: PaymentFaults; smtp: SmtpFaults; stripe?: StripeFaults };
  /**
   * Which payment provider the server pays through: the generic HTTP contract (PAYMENT_URL, default) or Stripe
   * (STRIPE_SECRET_KEY, the official SDK against a local server speaking Stripe's wire format).
   */
  payments?: "http" | "stripe";
  /** Progress lines (the chaos script prints them; tests stay quiet). */
  log?: (line: string) => void;
}

/** The fault run's mix: per attempt, 20 % 500s, 10 % timeouts after the provider applied it, 5 % dropped connections. */
export const FAULT_MIX: NonNullable<ChaosOptions["faults"]> = {
  payment: { error500: 0.2, timeoutAfterApply: 0.1, drop: 0.05 },
  // SMTP has no lookup by key: its faults are transient refusals before the message is handed over (451 at RCPT TO,
  // as greylisting does) and refused connections. A refusal after the DATA terminator, coinciding with a crash, is
  // the one case the hand-over mark misjudges (presumed delivered); the dispatcher test covers such refusals alone.
  smtp: { rejectRcpt451: 0.2, refuseConnection: 0.05 },
  // The same mix on Stripe's side: 500s before and after applying, timeouts and dropped connections after applying.
  stripe: { error500: 0.1, error500AfterApply: 0.1, timeoutAfterApply: 0.1, dropAfterApply: 0.05 },
};

export interface ChaosSummary extends EffectCounts {
  kills: number;
  threads: number;
  runs: number;
  completed: number;
  failed_runs: number;
  recovered_runs: number;
  double_refunds: number;
  missing_refunds: number;
  double_emails: number;
  lost_events: number;
  invalid_event_logs: number;
  seconds: number;
  /** A few failed runs' errors, to debug a red run. */
  failures: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The `i`-th ticket of a load: its order (ORD-9000…) and the customer's words. Every third leaves the order out, so
 * the agent asks for it (input_text) first.
 */
export function ticketOf(i: number): { orderId: string; message: string } {
  const orderId = `ORD-9${String(i).padStart(3, "0")}`;
  const message =
    i % 3 === 0 ? "My television broke, I want a refund." : `Please refund ${orderId}, it broke.`;
  return { orderId, message };
}

/** Kills cycle through moments: any time, inside the refund node, right after a node finished. */
const MOMENTS = ["random", "refund", "between"] as const;
/** Orders ORD-9000…ORD-9999 are prepared for the tickets. */
const MAX_TICKETS = 1000;

/**
 * The kill test: `next start` on a fresh database serves `threads` refund tickets driven concurrently to the end,
 * while the harness SIGKILLs the server `kills` times at chosen moments and restarts it. Nobody re-invokes a run:
 * the restarted server's sweeper continues them. Then it checks, in SQL, what must hold.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosSummary> {
  const log = options.log ?? (() => {});
  const started = Date.now();
  const prepared = await prepareDatabase("chaos", { prefix: "ORD-9", count: MAX_TICKETS });
  let kills = 0;
  const port = await freePort();
  // The outside world lives in this process: it survives the server's kills and counts what reached it.
  const stripe =
    options.payments === "stripe" ? await startFakeStripe({ faults: options.faults?.stripe }) : null;
  const provider = stripe ? null : await startFakePaymentProvider({ faults: options.faults?.payment });
  if (stripe) {
    // What the shop stored when each customer paid: a Stripe PaymentIntent per order.
    const ids = Array.from({ length: MAX_TICKETS }, (_, i) => `ORD-9${String(i).padStart(3, "0")}`);
    const intents = ids.map(() => stripe.addPayment({ amount: 50_000, currency: "eur" }).paymentIntent);
    await prepared.sql.rows(
      "UPDATE orders SET payment_ref = p.ref FROM unnest($1::text[], $2::text[]) AS p(id, ref) WHERE orders.id = p.id",
      [ids, intents],
    );
  }
  const smtp = await startTestSmtpServer({ faults: options.faults?.smtp });
  const env = {
    RUN_LEASE_MS: "1000",
    RUN_SWEEP_INTERVAL_MS: "200",
    OFFLINE_TOKEN_DELAY_MS: "15",
    CHAOS_REFUND_DELAY_MS: "150",
    ...(stripe
      ? { STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_API_BASE: stripe.url }
      : { PAYMENT_URL: provider?.url ?? "" }),
    PAYMENT_TIMEOUT_MS: "1000",
    SMTP_URL: smtp.url,
    EFFECT_POLL_MS: "100",
    EFFECT_RETRY_BASE_MS: "50",
    EFFECT_RETRY_MAX_MS: "1000",
    EFFECT_MAX_ATTEMPTS: "30",
    EFFECT_LEASE_MS: "5000",
  };
  let server: TestServer | undefined = await startTestServer({ databaseUrl: prepared.url, port, env });
  let restarting: Promise<void> | null = null;
  const target: Target = {
    url: server.url,
    up: () => restarting ?? Promise.resolve(),
  };
  const waiters: { match: (e: { type: string; stepName?: string }) => boolean; resolve: () => void }[] = [];
  const observe: Observer = (event) => {
    for (const w of [...waiters]) {
      if (w.match(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const when = (match: (e: { type: string; stepName?: string }) => boolean, timeoutMs: number) =>
    new Promise<void>((resolve) => {
      const w = { match, resolve };
      waiters.push(w);
      setTimeout(() => {
        const i = waiters.indexOf(w);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }, timeoutMs);
    });

  try {
    // `threads` tickets are always in flight; each finished one is replaced by a new one until the kills are done.
    let issued = 0;
    let killsDone = false;
    const outcomes: string[] = [];
    const deadline = Date.now() + 90_000 + options.kills * 8_000;
    const newTicket = async () => {
      const { orderId, message } = ticketOf(issued++);
      for (;;) {
        try {
          return { threadId: await createTicket(target.url, message), message, orderId };
        } catch {
          await target.up();
          await sleep(50);
        }
      }
    };
    const worker = async () => {
      do {
        outcomes.push(await driveThread(target, await newTicket(), observe, deadline));
      } while (!killsDone && issued < MAX_TICKETS);
    };
    let finished = false;
    const drivers = Promise.all(Array.from({ length: options.threads }, worker)).finally(() => {
      finished = true;
    });

    for (let k = 0; k < options.kills && !finished; k += 1) {
      const moment = MOMENTS[k % MOMENTS.length]!;
      // Let the restarted server pick its runs up and get somewhere before the next kill.
      await sleep(600);
      if (moment === "random") await sleep(100 + Math.random() * 500);
      else if (moment === "refund") {
        await when((e) => e.type === "STEP_STARTED" && e.stepName === "execute_refund", 3_000);
        await sleep(Math.random() * 100);
      } else await when((e) => e.type === "STEP_FINISHED", 3_000);
      restarting = (async () => {
        await server?.kill();
        server = await startTestServer({ databaseUrl: prepared.url, port, env });
      })();
      await restarting;
      restarting = null;
      kills += 1;
      log(
        `kill ${k + 1}/${options.kills} (${moment}) after ${((Date.now() - started) / 1000).toFixed(1)} s, ${issued} tickets`,
      );
    }
    killsDone = true;
    await drivers;
    // Delivery continues after the runs: wait until every effect is delivered or failed, then count at the provider.
    await waitForEffectsToSettle(prepared.sql, 120_000);
    // What the payment provider paid, by order: one entry per refund it created.
    const paid = stripe
      ? stripe.created.map((r) => r.metadata.order_id ?? "")
      : (provider?.created.map((c) => c.orderId) ?? []);
    const effects = await countProviderDeliveries(prepared.sql, paid, smtp);
    return {
      ...(await verifyRunOutcomes(prepared, { ...options, kills, threads: issued }, outcomes, started)),
      ...effects,
    };
  } finally {
    await server?.stop();
    await provider?.close();
    await stripe?.close();
    await smtp.close();
    await prepared.sql.end();
    // CHAOS_KEEP_DB=1 keeps the database for a post-mortem (its URL is printed); otherwise it is dropped.
    if (process.env.CHAOS_KEEP_DB) console.error(`chaos: database kept at ${prepared.url}`);
    else await prepared.drop();
  }
}

export async function verifyRunOutcomes(
  prepared: Awaited<ReturnType<typeof prepareDatabase>>,
  options: ChaosOptions,
  outcomes: string[],
  started: number,
): Promise<Omit<ChaosSummary, keyof EffectCounts>> {
  const { sql } = prepared;
  const one = async (text: string) => Number((await sql.rows<{ n: number }>(text))[0]?.n ?? 0);
  // Every thread's log, opened (events are sealed under the thread's key, which this process shares with the servers).
  const stored = await sql.rows<{ thread_id: string; seq: string; run_id: string; event: unknown }>(
    "SELECT thread_id, seq, run_id, event FROM events ORDER BY thread_id, seq",
  );
  const byThread = new Map<string, { thread_id: string; seqs: string[]; events: BaseEvent[] }>();
  const recovered = new Set<string>();
  for (const row of stored) {
    const event = (await openThreadJson(sql, row.thread_id, row.event)) as BaseEvent & { name?: string };
    const log = byThread.get(row.thread_id) ?? { thread_id: row.thread_id, seqs: [], events: [] };
    byThread.set(row.thread_id, log);
    log.seqs.push(row.seq);
    log.events.push(event);
    if (event.type === "CUSTOM" && event.name === "run_recovered") recovered.add(row.run_id);
  }
  const logs = [...byThread.values()];
  let lost = 0;
  let invalid = 0;
  for (const row of logs) {
    const seqs = row.seqs.map(Number);
    lost += seqs[seqs.length - 1]! - seqs.length;
    try {
      await lastValueFrom(from(row.events).pipe(verifyEvents(), toArray()));
    } catch {
      invalid += 1;
    }
  }
  return {
    kills: options.kills,
    threads: options.threads,
    runs: await one("SELECT count(*)::int AS n FROM runs"),
    completed: outcomes.filter((o) => o === "completed").length,
    failed_runs: await one(
      "SELECT count(*)::int AS n FROM runs WHERE status IN ('failed', 'queued', 'running')",
    ),
    recovered_runs: recovered.size,
    double_refunds: await one(
      "SELECT count(*)::int AS n FROM (SELECT order_id FROM refunds GROUP BY order_id HAVING count(*) > 1) x",
    ),
    missing_refunds: options.threads - (await one("SELECT count(DISTINCT order_id)::int AS n FROM refunds")),
    double_emails: await one(
      "SELECT count(*)::int AS n FROM (SELECT thread_id FROM outbox GROUP BY thread_id HAVING count(*) > 1) x",
    ),
    lost_events: lost,
    invalid_event_logs: invalid,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    failures: (
      await sql.rows<{ e: string }>(
        "SELECT kind || ' ' || status || ' attempts=' || attempts || ': ' || coalesce(error_code, '') || ' ' || coalesce(error_message, '') AS e FROM runs WHERE status <> 'succeeded' AND status <> 'interrupted' LIMIT 5",
      )
    ).map((r) => r.e),
  };
}
