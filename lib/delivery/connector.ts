import "server-only";
import type { Authorization, EffectTaskAction } from "@/lib/contract/wire";

/**
 * What the console says and offers about one kind of effect, declared by the module that delivers it (next to its
 * connector) and listed once, in `lib/delivery/kinds.ts`: nothing else names the kinds.
 */
export interface EffectKind {
  kind: string;
  /** The effect as one line for people ("Refund €25.00 for ORD-1002"). */
  summary(payload: Record<string, unknown>): string;
  /**
   * What an operator may do about an effect of this kind that failed, or whose outcome is unknown (`unconfirmed`);
   * `lastError` says why it failed (a refund the provider failed cannot be retried under its key).
   */
  taskActions(status: string, lastError?: string | null): EffectTaskAction[];
  /**
   * For a kind that moves money or changes an account: what delivering this payload does, as a decision must have
   * authorized it. The dispatcher delivers it only when the effect's receipt verifies and authorized exactly this
   * (lib/runtime/runs/receipts.ts `checkEffectAuthority`); otherwise it is refused for good, an operator task.
   */
  authority?(payload: Record<string, unknown>): Authorization;
}

/** Most channels: try again or close it; an unknown outcome may also be confirmed as arrived. */
export const defaultTaskActions = (status: string): EffectTaskAction[] =>
  status === "unconfirmed" ? ["retry", "confirmed_delivered", "mark_handled"] : ["retry", "mark_handled"];

/** An effect as a connector delivers it: its key (the provider's idempotency key), payload and attempt number. */
export interface EffectDelivery {
  id: string;
  idempotencyKey: string;
  /** 1 on the first attempt. Above 1 an earlier attempt may have reached the provider: reconcile before resending. */
  attempt: number;
  payload: Record<string, unknown>;
  /**
   * An earlier attempt got as far as handing the effect over for good (`markHandedOver`) and its dispatcher stopped
   * before recording the outcome. For a channel with nothing to look up (SMTP), the outcome is unknown: `unconfirmed`.
   */
  handedOver: boolean;
  /**
   * Record, durably, that the effect is being handed over now (e.g. right before the SMTP DATA terminator): a crash
   * after this point finds `handedOver` set. Throws when this dispatcher no longer holds the effect.
   */
  markHandedOver(ref: string): Promise<void>;
}

/** What one delivery attempt came to. */
export type DeliveryResult =
  /**
   * The provider took it. `pending`: it has not settled it yet (a Stripe refund `pending`): recorded `pending`, never
   * called delivered, until the provider says it succeeded or failed (its webhook, or the reconciliation's look-up).
   */
  | { ok: true; providerRef: string | null; pending?: boolean }
  /** `retry`: a transient failure (5xx, network, timeout); otherwise the provider refused it for good. */
  | { ok: false; retry: boolean; error: string; unconfirmed?: undefined }
  /**
   * Nobody can tell whether it arrived: handed over before a restart, on a channel with nothing to look up. Not sent
   * again and not called delivered — an operator confirms or resends. `providerRef`: what to look for at the provider.
   */
  | { ok: false; retry: false; unconfirmed: true; error: string; providerRef: string };

/** Delivers one kind of effect (`payment`, `email`) to the outside world. */
export interface EffectConnector {
  kind: string;
  deliver(effect: EffectDelivery): Promise<DeliveryResult>;
}

/** A transient failure: try again later. */
export const retryable = (error: string): DeliveryResult => ({ ok: false, retry: true, error });
/** A permanent refusal: retrying cannot help; an operator decides. */
export const refused = (error: string): DeliveryResult => ({ ok: false, retry: false, error });
