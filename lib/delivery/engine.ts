import "server-only";
import {
  type DeliveryResult,
  type EffectConnector,
  type EffectDelivery,
  refused,
  retryable,
} from "@/lib/delivery/connector";
import { retryingDatabaseFaults } from "@/lib/platform/database-faults";

/*
 * The one delivery engine (issue 29): side effects (payments, emails, account changes) and notifications (webhooks,
 * emails to a role) are delivered by the same loop — claim what is due under a lease, hand each item to the connector
 * registered for its kind, settle the outcome under one attempt and back-off model. What differs is only where the
 * items live (a `DeliveryQueue`: how to claim and settle them) and which connectors a queue has. Adding a kind is
 * adding a connector to its queue's list.
 */

/** Attempts and back-off (from the environment unless a test passes its own). */
export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
  /**
   * How long recording an outcome is tried again while the database is unavailable (a failover between the
   * provider's answer and our record of it). Within the claim's lease: past it, the item is reconciled as a crashed
   * delivery would be (a payment looked up by key; an email left unconfirmed). 0 or absent: not retried.
   */
  settleRetryMs?: number;
}

/**
 * Exponential back-off with jitter: the n-th failed attempt waits base × 2^(n-1), capped at `maxMs`, of which a random
 * half is taken off (so instances that failed together do not retry together).
 */
export function backoffMs(attempt: number, { baseMs, maxMs }: RetryPolicy, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** What one attempt comes to, as a queue records it. */
export type Settlement =
  | { ok: true; providerRef: string | null; pending?: boolean }
  | {
      ok: false;
      error: string;
      /** When to try again; null: never (refused for good, out of attempts, or unconfirmed). */
      retryInMs: number | null;
      /** Nobody can tell whether it arrived: an operator looks for it at the provider under this reference. */
      unconfirmed?: { providerRef: string };
    };

/**
 * Record an outcome; while the database is unavailable, again with back-off for up to `settleRetryMs`. What was
 * delivered is then recorded as delivered — not left `sending` for the reconciler, which cannot tell whether an email
 * arrived and would open an operator task for one that did. A record that committed although its answer was lost
 * changes nothing the second time (the settle is a compare-and-set on the claim).
 */
function settleRetrying<T>(
  queue: DeliveryQueue<T>,
  item: T,
  settlement: Settlement,
  policy: RetryPolicy,
): Promise<void> {
  return retryingDatabaseFaults(() => queue.settle(item, settlement), {
    withinMs: policy.settleRetryMs ?? 0,
  });
}

/** A delivery result under the policy: delivered, tried again after a back-off, or final. */
export function settlementOf(
  result: DeliveryResult,
  attempts: number,
  policy: RetryPolicy,
  random = Math.random,
): Settlement {
  if (result.ok)
    return { ok: true, providerRef: result.providerRef, ...(result.pending ? { pending: true } : {}) };
  const again = result.retry && attempts < policy.maxAttempts;
  return {
    ok: false,
    error: result.error,
    retryInMs: again ? backoffMs(attempts, policy, random) : null,
    ...(result.unconfirmed ? { unconfirmed: { providerRef: result.providerRef } } : {}),
  };
}

/** Connectors by the kind each delivers; two connectors for one kind is a mistake, refused here. */
export function connectorsByKind(connectors: readonly EffectConnector[]): Map<string, EffectConnector> {
  const byKind = new Map<string, EffectConnector>();
  for (const connector of connectors) {
    if (byKind.has(connector.kind)) throw new Error(`two connectors deliver ${connector.kind}`);
    byKind.set(connector.kind, connector);
  }
  return byKind;
}

/** Where a kind of item waits to be delivered: how to claim what is due and record each outcome. */
export interface DeliveryQueue<T> {
  /** Claim what is due under a lease (no other instance delivers it meanwhile). */
  claim(): Promise<T[]>;
  kindOf(item: T): string;
  /** Attempts so far, this one included. */
  attemptsOf(item: T): number;
  /** The item as its connector receives it. */
  delivery(item: T): EffectDelivery;
  settle(item: T, settlement: Settlement): Promise<void>;
  /** Around each item's delivery (tracing). */
  around?(item: T, work: () => Promise<void>): Promise<void>;
  /**
   * Before the connector: a refusal that settles the item without delivering it (an effect whose authority does not
   * check out), or null to deliver.
   */
  precheck?(item: T): Promise<DeliveryResult | null>;
}

/**
 * Deliver what is due from one queue, once: claim, deliver each item through the connector of its kind (a kind with
 * no connector is refused for good), settle the outcome under the policy. Returns how many items were claimed.
 */
export async function deliverDue<T>(
  queue: DeliveryQueue<T>,
  connectors: Map<string, EffectConnector>,
  policy: RetryPolicy,
): Promise<number> {
  const items = await queue.claim();
  const around = queue.around?.bind(queue) ?? ((_item: T, work: () => Promise<void>) => work());
  await Promise.all(
    items.map((item) =>
      around(item, async () => {
        const kind = queue.kindOf(item);
        const connector = connectors.get(kind);
        let result: DeliveryResult;
        try {
          const refusal = connector ? ((await queue.precheck?.(item)) ?? null) : null;
          result = !connector
            ? refused(`no connector for ${kind}`)
            : (refusal ?? (await connector.deliver(queue.delivery(item))));
        } catch (error) {
          result = retryable(error instanceof Error ? error.message : String(error));
        }
        await settleRetrying(queue, item, settlementOf(result, queue.attemptsOf(item), policy), policy);
      }),
    ),
  );
  return items.length;
}
