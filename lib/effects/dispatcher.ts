import { accountConnector } from "./account";
import "server-only";
import { getDatabase } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import {
  claimDueEffects,
  HANDED_OVER,
  listLocalEffectOwners,
  markEffectAttemptFailed,
  markEffectDelivered,
  markEffectHandedOver,
} from "@/lib/db/queries/effects";
import { orderPaymentRef } from "@/lib/db/queries/orders";
import type { Effect } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { env } from "@/lib/env";
import { observeDelivery, traceDelivery } from "@/lib/observability/effects";
import { errorFields, logger } from "@/lib/observability/logger";
import { instanceId, instanceLabels, isGoneHere } from "@/lib/runtime/instance";
import type { DeliveryResult, EffectConnector } from "./connector";
import { emailConnector } from "./email";
import { httpPaymentGateway, paymentConnector, simulatedPaymentGateway } from "./payment";
import { stripePaymentGateway } from "./stripe";

/** Retry settings (from the environment unless a test passes its own). */
export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
}

/**
 * Exponential back-off with jitter: the n-th failed attempt waits base × 2^(n-1), capped at `maxMs`, of which a random
 * half is taken off (so instances that failed together do not retry together).
 */
export function backoffMs(attempt: number, { baseMs, maxMs }: RetryPolicy, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** The connectors this process delivers with, configured from the environment. */
export function connectorsFromEnv(db: Queryable): Map<string, EffectConnector> {
  const payment = paymentConnector(
    env.STRIPE_SECRET_KEY
      ? stripePaymentGateway({
          secretKey: env.STRIPE_SECRET_KEY,
          apiBase: env.STRIPE_API_BASE,
          timeoutMs: env.PAYMENT_TIMEOUT_MS,
          paymentOf: (orderId) => orderPaymentRef({ db, orderId }),
        })
      : env.PAYMENT_URL
        ? httpPaymentGateway({ baseUrl: env.PAYMENT_URL, timeoutMs: env.PAYMENT_TIMEOUT_MS })
        : simulatedPaymentGateway(),
  );
  const email = emailConnector({
    from: env.MAIL_FROM,
    transport: env.SMTP_URL ? { smtpUrl: env.SMTP_URL } : { directory: env.MAIL_DIR },
  });
  return new Map([payment, email, accountConnector(db)].map((c) => [c.kind, c]));
}

const DISPATCH_SYSTEM = { id: "system:dispatcher", label: "effect dispatcher", role: null } as const;

/**
 * Deliver what is due, once: claim due effects (and those a dead dispatcher held), deliver each through its
 * connector, and record the outcome — delivered, queued again after a back-off, failed (out of attempts, or refused
 * for good) or unconfirmed (handed over by a dispatcher that died before the answer), the last two opening the
 * effect's operator task and written to the audit trail. Returns how many
 * effects it claimed.
 */
export async function dispatchDueEffects({
  db,
  connectors,
  owner,
  retry,
  limit = 16,
}: {
  db: Queryable;
  connectors: Map<string, EffectConnector>;
  owner: string;
  retry: RetryPolicy;
  limit?: number;
}): Promise<number> {
  const deadOwners = await deadLocalOwners(db, owner);
  const claimed = await claimDueEffects({ db, owner, leaseMs: env.EFFECT_LEASE_MS, limit, deadOwners });
  await Promise.all(
    claimed.map((effect) =>
      traceDelivery(db, effect, () => deliverOne({ db, connectors, owner, retry, effect })),
    ),
  );
  return claimed.length;
}

/** Owners of sending effects that were processes of this boot and pid namespace and are gone (crashed). */
async function deadLocalOwners(db: Queryable, owner: string): Promise<string[]> {
  const { bootId, pidNamespace } = instanceLabels();
  if (!bootId || !pidNamespace) return [];
  const owners = await listLocalEffectOwners({ db, bootId, pidNamespace, except: owner });
  return owners.filter((o) => isGoneHere(o.id, o.pid)).map((o) => o.id);
}

async function deliverOne({
  db,
  connectors,
  owner,
  retry,
  effect,
}: {
  db: Queryable;
  connectors: Map<string, EffectConnector>;
  owner: string;
  retry: RetryPolicy;
  effect: Effect;
}): Promise<void> {
  const connector = connectors.get(effect.kind);
  let result: DeliveryResult;
  try {
    result = connector
      ? await connector.deliver({
          id: effect.id,
          idempotencyKey: effect.idempotencyKey,
          attempt: effect.attempts,
          payload: effect.payload as Record<string, unknown>,
          handedOver: effect.providerRef?.startsWith(HANDED_OVER) ?? false,
          async markHandedOver(ref) {
            if (!(await markEffectHandedOver({ db, effectId: effect.id, owner, ref }))) {
              throw new Error(`effect ${effect.id} is no longer held by ${owner}`);
            }
          },
        })
      : { ok: false, retry: false, error: `no connector for ${effect.kind} effects` };
  } catch (error) {
    result = { ok: false, retry: true, error: error instanceof Error ? error.message : String(error) };
  }
  if (result.ok) {
    await markEffectDelivered({ db, effectId: effect.id, owner, providerRef: result.providerRef });
    observeDelivery(effect, "delivered");
    return;
  }
  const outOfAttempts = effect.attempts >= retry.maxAttempts;
  const status = await markEffectAttemptFailed({
    db,
    effectId: effect.id,
    owner,
    error: result.error,
    retryInMs: result.retry && !outOfAttempts ? backoffMs(effect.attempts, retry) : null,
    ...(result.unconfirmed ? { unconfirmed: { providerRef: result.providerRef } } : {}),
  });
  const taskOpened = status === "failed" || status === "unconfirmed";
  observeDelivery(effect, taskOpened ? status : "retry", result.error);
  if (taskOpened) {
    await recordAudit({
      db,
      entries: [
        {
          action: "effect_failed",
          actor: DISPATCH_SYSTEM,
          threadId: effect.threadId,
          detail: {
            effectId: effect.id,
            kind: effect.kind,
            attempts: effect.attempts,
            error: result.error,
            ...(status === "unconfirmed" ? { unconfirmed: true } : {}),
          },
        },
      ],
    });
  }
}

const KEY = Symbol.for("hitl-console.effect-dispatcher");
type G = typeof globalThis & { [KEY]?: { timer: NodeJS.Timeout; kick: () => void } };

/**
 * Start this process's dispatcher (idempotent): every EFFECT_POLL_MS it delivers what is due, on every instance
 * alike (claims never overlap). Effects left `sending` by a crashed process are taken over and reconciled.
 */
export async function startDispatcher(): Promise<void> {
  const g = globalThis as G;
  if (g[KEY]) return;
  const { db } = await getDatabase();
  const connectors = connectorsFromEnv(db);
  const retry: RetryPolicy = {
    maxAttempts: env.EFFECT_MAX_ATTEMPTS,
    baseMs: env.EFFECT_RETRY_BASE_MS,
    maxMs: env.EFFECT_RETRY_MAX_MS,
  };
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      // Keep going while full batches come back: a backlog drains without waiting for the next tick.
      while ((await dispatchDueEffects({ db, connectors, owner: instanceId(), retry })) >= 16) {}
    } catch (error) {
      logger().error(errorFields(error), "effects: dispatch failed");
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), env.EFFECT_POLL_MS);
  timer.unref();
  g[KEY] = { timer, kick: () => void tick() };
  void tick();
}
