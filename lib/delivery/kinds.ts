import "server-only";
import type { Queryable } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";
import { orderPaymentRef, orderStripeCustomer } from "@/lib/shop/orders";
import type { EffectConnector, EffectKind } from "./connector";
import { accountConnector, accountKind } from "./connectors/account";
import { emailConnector, emailKind } from "./connectors/email";
import {
  httpPaymentGateway,
  type PaymentGateway,
  paymentConnector,
  paymentKind,
  type RefundOrder,
  simulatedPaymentGateway,
} from "./connectors/payment";
import { stripePaymentGateway } from "./connectors/stripe";

/*
 * The kinds of side effect: the one list, and the one place to add a kind. Each is declared by the module that
 * delivers it (its words for people, an operator's actions, its connector) and joined here with how this process
 * configures its connector from the environment. The dispatcher delivers exactly these kinds.
 */
export interface DeliveredKind extends EffectKind {
  /** The connector this process delivers the kind with, configured from the environment. */
  connect(db: Queryable): EffectConnector;
}

/** The payment provider this process is configured with: Stripe, the generic HTTP provider, or the simulator. */
export function paymentGatewayFromEnv(db: Queryable): PaymentGateway {
  return env.STRIPE_SECRET_KEY
    ? stripePaymentGateway({
        secretKey: env.STRIPE_SECRET_KEY,
        apiBase: env.STRIPE_API_BASE,
        timeoutMs: env.PAYMENT_TIMEOUT_MS,
        paymentOf: (orderId) => orderPaymentRef({ db, orderId }),
        customerOf: (orderId) => orderStripeCustomer({ db, orderId }),
      })
    : env.PAYMENT_URL
      ? httpPaymentGateway({ baseUrl: env.PAYMENT_URL, timeoutMs: env.PAYMENT_TIMEOUT_MS })
      : simulatedPaymentGateway();
}

/**
 * Whether the configured provider pays this refund or credit by itself, or a person must (Stripe without the order's
 * payment or customer on record): what an agent may tell the customer before it is paid.
 */
export async function paidWithoutPerson({
  db,
  refund,
}: {
  db: Queryable;
  refund: Pick<RefundOrder, "orderId" | "method">;
}): Promise<boolean> {
  const gateway = paymentGatewayFromEnv(db);
  return gateway.handles ? gateway.handles(refund) : true;
}

export const EFFECT_KINDS: readonly DeliveredKind[] = [
  { ...paymentKind, connect: (db) => paymentConnector(paymentGatewayFromEnv(db)) },
  {
    ...emailKind,
    connect: () =>
      emailConnector({
        from: env.MAIL_FROM,
        transport: env.SMTP_URL ? { smtpUrl: env.SMTP_URL } : { directory: env.MAIL_DIR },
      }),
  },
  { ...accountKind, connect: (db) => accountConnector(db) },
];

/** The declared kind, or undefined for a kind nobody delivers (an effect row of an older version, say). */
export function effectKind(kind: string): EffectKind | undefined {
  return EFFECT_KINDS.find((k) => k.kind === kind);
}
