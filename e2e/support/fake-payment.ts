import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * A local fake payment provider over real HTTP, enforcing the Idempotency-Key contract the payment connector speaks
 * (lib/delivery/connectors/payment.ts): `POST /refunds` creates one refund per key (201 `{ id }`, then 409 `{ id }` for the same
 * key), `GET /refunds/by-key/<key>` looks one up (200 `{ id, status, amount_cents, currency }` / 404). A refund's
 * status is `succeeded` unless a test says otherwise (`setRefundStatus` for new ones, `setStatus` later), and a test
 * may make it forget one (`forget`: a refund the ledger holds and the provider does not). It counts what it did provider-side — the
 * figures the race, kill and fault tests check — and can inject faults per request.
 */

/** Chances per request (0…1): a 500 before applying, a timeout after applying, a dropped connection (not applied). */
export interface PaymentFaults {
  error500?: number;
  timeoutAfterApply?: number;
  drop?: number;
  /** Delay before answering (ms). */
  slowMs?: number;
  /** Answer every request with 500 (nothing applied) until cleared. */
  down?: boolean;
}

/** One refund the provider created (what a refund "delivered at the provider" is). */
export interface ProviderRefund {
  id: string;
  key: string;
  orderId: string;
  amountCents: number;
  currency: string;
  reference: string;
  status: string;
  at: number;
}

export interface FakePaymentProvider {
  url: string;
  /** Every refund created, in order (at most one per key: the provider enforces it). */
  created: ProviderRefund[];
  /** Requests answered, by outcome (created, duplicate, found, not_found, 500, timeout, drop, bad_request). */
  outcomes: Record<string, number>;
  setFaults(faults: PaymentFaults): void;
  /** The status new refunds are created with (default `succeeded`). */
  setRefundStatus(status: string): void;
  /** Change the status of the refund made under `key`. */
  setStatus(key: string, status: string): void;
  /** Forget the refund made under `key` (the look-up answers 404). */
  forget(key: string): void;
  close(): Promise<void>;
}

export async function startFakePaymentProvider(
  options: { faults?: PaymentFaults; random?: () => number } = {},
): Promise<FakePaymentProvider> {
  let faults: PaymentFaults = options.faults ?? {};
  let newStatus = "succeeded";
  const random = options.random ?? Math.random;
  const byKey = new Map<string, ProviderRefund>();
  const created: ProviderRefund[] = [];
  const outcomes: Record<string, number> = {};
  const sockets = new Set<Socket>();
  const count = (outcome: string) => {
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  /** Decide this request's fault: applied-then-hang, a 500, a drop, or none. */
  const roll = (): "500" | "timeout" | "drop" | null => {
    if (faults.down) return "500";
    const r = random();
    const e = faults.error500 ?? 0;
    const t = faults.timeoutAfterApply ?? 0;
    const d = faults.drop ?? 0;
    if (r < e) return "500";
    if (r < e + t) return "timeout";
    if (r < e + t + d) return "drop";
    return null;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (faults.slowMs) await new Promise((r) => setTimeout(r, faults.slowMs));
    const url = new URL(req.url ?? "/", "http://fake");
    const fault = roll();
    if (fault === "500") {
      count("500");
      return send(res, 500, { message: "injected failure" });
    }
    if (fault === "drop") {
      count("drop");
      req.socket.destroy();
      return;
    }
    // A timeout after applying: the work below happens, the answer never comes.
    const answer = (status: number, body: unknown) => {
      if (fault === "timeout") {
        count("timeout");
        return;
      }
      send(res, status, body);
    };
    if (req.method === "GET" && url.pathname.startsWith("/refunds/by-key/")) {
      const key = decodeURIComponent(url.pathname.slice("/refunds/by-key/".length));
      const found = byKey.get(key);
      if (fault !== "timeout") count(found ? "found" : "not_found");
      return found
        ? answer(200, {
            id: found.id,
            status: found.status,
            amount_cents: found.amountCents,
            currency: found.currency,
          })
        : answer(404, { message: "no refund under this key" });
    }
    if (req.method === "POST" && url.pathname === "/refunds") {
      const key = req.headers["idempotency-key"];
      if (typeof key !== "string" || key === "") {
        count("bad_request");
        return send(res, 400, { message: "Idempotency-Key header required" });
      }
      const known = byKey.get(key);
      if (known) {
        if (fault !== "timeout") count("duplicate");
        return answer(409, { id: known.id, message: "duplicate idempotency key" });
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
      const refund: ProviderRefund = {
        id: `re_${randomUUID()}`,
        key,
        orderId: String(body.order_id ?? ""),
        amountCents: Number(body.amount_cents ?? 0),
        currency: String(body.currency ?? "EUR"),
        reference: String(body.reference ?? ""),
        status: newStatus,
        at: Date.now(),
      };
      byKey.set(key, refund);
      created.push(refund);
      if (fault !== "timeout") count("created");
      return answer(201, { id: refund.id, status: refund.status });
    }
    send(res, 404, { message: "not found" });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { message: "fake provider error" });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("fake payment provider: no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    created,
    outcomes,
    setFaults(next) {
      faults = next;
    },
    setRefundStatus(status) {
      newStatus = status;
    },
    setStatus(key, status) {
      const found = byKey.get(key);
      if (!found) throw new Error(`fake payment provider: no refund under ${key}`);
      found.status = status;
    },
    forget(key) {
      byKey.delete(key);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
