import "server-only";

/** An effect as a connector delivers it: its key (the provider's idempotency key), payload and attempt number. */
export interface EffectDelivery {
  id: string;
  idempotencyKey: string;
  /** 1 on the first attempt. Above 1 an earlier attempt may have reached the provider: reconcile before resending. */
  attempt: number;
  payload: Record<string, unknown>;
}

/** What one delivery attempt came to. */
export type DeliveryResult =
  | { ok: true; providerRef: string | null }
  /** `retry`: a transient failure (5xx, network, timeout); otherwise the provider refused it for good. */
  | { ok: false; retry: boolean; error: string };

/** Delivers one kind of effect (`payment`, `email`) to the outside world. */
export interface EffectConnector {
  kind: string;
  deliver(effect: EffectDelivery): Promise<DeliveryResult>;
}

/** A transient failure: try again later. */
export const retryable = (error: string): DeliveryResult => ({ ok: false, retry: true, error });
/** A permanent refusal: retrying cannot help; an operator decides. */
export const refused = (error: string): DeliveryResult => ({ ok: false, retry: false, error });
