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
import type { Effect } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { isErasedValue } from "@/lib/db/vault";
import { observeDelivery, traceDelivery } from "@/lib/delivery/effects";
import { connectorsByKind, deliverDue, type RetryPolicy, type Settlement } from "@/lib/delivery/engine";
import { checkEffectAuthority } from "@/lib/delivery/receipts";
import { env } from "@/lib/platform/env";
import { instanceId, instanceLabels, isGoneHere } from "@/lib/platform/instance";
import { peekSingleton, setSingleton } from "@/lib/platform/singleton";
import { reportReachable, reportTaskFailure } from "@/lib/platform/status";
import { type DeliveryResult, type EffectConnector, refused } from "./connector";
import { EFFECT_KINDS, effectKind } from "./kinds";

export { backoffMs, type RetryPolicy } from "@/lib/delivery/engine";

/** The connectors this process delivers with: one per declared kind, configured from the environment. */
export function connectorsFromEnv(db: Queryable): Map<string, EffectConnector> {
  return connectorsByKind(EFFECT_KINDS.map((kind) => kind.connect(db)));
}

/**
 * The kinds that move money or change an account are delivered only against their receipt: before the connector is
 * called, the effect's receipt must verify and must have authorized exactly what its payload says. A refusal is final
 * (an operator task): the connector — the provider — is never called.
 */
function authorityCheck(db: Queryable, effect: Effect) {
  const kind = effectKind(effect.kind);
  if (!kind?.authority) return null;
  const authority = kind.authority;
  return async (): Promise<DeliveryResult | null> => {
    const refusal = await checkEffectAuthority({
      db,
      effect,
      wanted: authority(effect.payload as Record<string, unknown>),
    });
    return refusal ? refused(refusal) : null;
  };
}

/** The refusal of an effect whose payload was sealed under a key erasure destroyed. */
const SUBJECT_ERASED = "conflict:subject_erased";

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
  return deliverDue<Effect>(
    {
      claim: () => claimDueEffects({ db, owner, leaseMs: env.EFFECT_LEASE_MS, limit, deadOwners }),
      kindOf: (effect) => effect.kind,
      attemptsOf: (effect) => effect.attempts,
      delivery: (effect) => ({
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
      }),
      settle: (effect, settlement) => settleEffect(db, owner, effect, settlement),
      precheck: async (effect) =>
        isErasedValue(effect.payload)
          ? refused(`${SUBJECT_ERASED}: the customer's data was erased before it was delivered; not sent`)
          : ((await authorityCheck(db, effect)?.()) ?? null),
      around: (effect, work) => traceDelivery(effect, work),
    },
    connectors,
    retry,
  );
}

/** Owners of sending effects that were processes of this boot and pid namespace and are gone (crashed). */
async function deadLocalOwners(db: Queryable, owner: string): Promise<string[]> {
  const { bootId, pidNamespace } = instanceLabels();
  if (!bootId || !pidNamespace) return [];
  const owners = await listLocalEffectOwners({ db, bootId, pidNamespace, except: owner });
  return owners.filter((o) => isGoneHere(o.id, o.pid)).map((o) => o.id);
}

/**
 * Record an effect's attempt: delivered; queued again after the back-off; or failed / unconfirmed, which opens the
 * effect's operator task and is written to the audit trail.
 */
async function settleEffect(
  db: Queryable,
  owner: string,
  effect: Effect,
  settlement: Settlement,
): Promise<void> {
  if (settlement.ok) {
    await markEffectDelivered({
      db,
      effectId: effect.id,
      owner,
      providerRef: settlement.providerRef,
      pending: settlement.pending ?? false,
    });
    observeDelivery(effect, settlement.pending ? "pending" : "delivered");
    return;
  }
  const status = await markEffectAttemptFailed({
    db,
    effectId: effect.id,
    threadId: effect.threadId,
    owner,
    error: settlement.error,
    retryInMs: settlement.retryInMs,
    ...(settlement.unconfirmed ? { unconfirmed: settlement.unconfirmed } : {}),
  });
  const taskOpened = status === "failed" || status === "unconfirmed";
  observeDelivery(effect, taskOpened ? status : "retry", settlement.error);
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
            error: settlement.error,
            ...(status === "unconfirmed" ? { unconfirmed: true } : {}),
          },
        },
      ],
    });
  }
}

/** This process's dispatcher once started (process-wide: one timer however often the module is bundled). */
const DISPATCHER = "effect-dispatcher";
interface Dispatcher {
  timer: NodeJS.Timeout;
  kick: () => void;
}

/**
 * Start this process's dispatcher (idempotent): every EFFECT_POLL_MS it delivers what is due, on every instance
 * alike (claims never overlap). Effects left `sending` by a crashed process are taken over and reconciled.
 */
export async function startDispatcher(): Promise<void> {
  if (peekSingleton<Dispatcher>(DISPATCHER)) return;
  const { db } = await getDatabase();
  const connectors = connectorsFromEnv(db);
  const retry: RetryPolicy = {
    maxAttempts: env.EFFECT_MAX_ATTEMPTS,
    baseMs: env.EFFECT_RETRY_BASE_MS,
    maxMs: env.EFFECT_RETRY_MAX_MS,
    // Recording an outcome rides out a failover within half the claim's lease (see `settleRetryMs`).
    settleRetryMs: Math.floor(env.EFFECT_LEASE_MS / 2),
  };
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      // Keep going while full batches come back: a backlog drains without waiting for the next tick.
      while ((await dispatchDueEffects({ db, connectors, owner: instanceId(), retry })) >= 16) {}
      reportReachable("delivery");
    } catch (error) {
      reportTaskFailure("delivery", error, "effects: dispatch failed");
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), env.EFFECT_POLL_MS);
  timer.unref();
  setSingleton<Dispatcher>(DISPATCHER, { timer, kick: () => void tick() });
  void tick();
}
