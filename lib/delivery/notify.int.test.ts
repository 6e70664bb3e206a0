import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBackend } from "@/e2e/support/backends";
import type { Database } from "@/lib/db/open";
import { enqueueNotifications, insertTarget, listEscalationRecipients } from "@/lib/db/queries/notifications";
import { env } from "@/lib/platform/env";
import { parseTrustedProxies } from "@/lib/platform/net/client-address";
import { deliverNotifications } from "./notify";

/* Webhook notifications: queued once per event and target, signed with HMAC-SHA256, retried after a 5xx. */
describe("webhook notifications", () => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;
  let server: Server;
  const received: { body: string; signature: string | undefined }[] = [];
  let failFirst = true;

  beforeAll(async () => {
    backend = await openBackend("pglite");
    database = backend.database;
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        received.push({ body, signature: req.headers["x-hitl-signature"] as string | undefined });
        res.statusCode = failFirst ? 503 : 204;
        failFirst = false;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  }, 120_000);
  afterAll(async () => {
    server?.close();
    await backend?.close();
  });

  it("refuses a loopback target unless WEBHOOK_ALLOW_PRIVATE lists it: nothing is sent, and it is not retried", async () => {
    const { db } = database;
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await insertTarget({
      db,
      target: { kind: "webhook", target: url, events: ["escalated"], minAmountCents: null, secret: "x" },
    });
    expect(
      await enqueueNotifications({
        db,
        event: "escalated",
        subjectId: "int-0",
        payload: { title: "Refund" },
      }),
    ).toBe(1);
    expect(await deliverNotifications({ db })).toBe(1);
    await database.sql.query("UPDATE notifications SET next_attempt_at = now()");
    expect(await deliverNotifications({ db })).toBe(0);
    const [row] = await database.sql.query<{ status: string; last_error: string }>(
      "SELECT status, last_error FROM notifications",
    );
    expect(row?.status).toBe("failed");
    expect(row?.last_error).toMatch(/blocked address/);
    expect(received).toHaveLength(0);
    await database.sql.query("DELETE FROM notifications");
    await database.sql.query("DELETE FROM notification_targets");
  });

  it("signs, retries after a 5xx, and notifies each target once per event", async () => {
    const { db } = database;
    // The test's receiver is on loopback: allowed explicitly, as an operator would for an internal hook.
    (env as { WEBHOOK_ALLOW_PRIVATE: unknown }).WEBHOOK_ALLOW_PRIVATE = parseTrustedProxies("127.0.0.1");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const secret = "s3cret-key-for-the-test";
    await insertTarget({
      db,
      target: { kind: "webhook", target: url, events: ["escalated"], minAmountCents: null, secret },
    });
    const queue = () =>
      enqueueNotifications({ db, event: "escalated", subjectId: "int-1", payload: { title: "Refund" } });
    expect(await queue()).toBe(1);
    expect(await queue()).toBe(0);
    expect(await enqueueNotifications({ db, event: "new_item", subjectId: "int-1", payload: {} })).toBe(0);

    expect(await deliverNotifications({ db })).toBe(1);
    // The 503 put it back with a back-off; make it due now and deliver again.
    await database.sql.query("UPDATE notifications SET next_attempt_at = now()");
    expect(await deliverNotifications({ db })).toBe(1);
    expect(await deliverNotifications({ db })).toBe(0);
    const [row] = await database.sql.query<{ status: string; attempts: number }>(
      "SELECT status, attempts FROM notifications",
    );
    expect(row).toMatchObject({ status: "delivered", attempts: 2 });
    expect(received).toHaveLength(2);
    for (const r of received) {
      expect(r.signature).toBe(`sha256=${createHmac("sha256", secret).update(r.body).digest("hex")}`);
      expect(JSON.parse(r.body)).toMatchObject({ event: "escalated", title: "Refund" });
    }
    // The thread page's "escalated to": each target with its delivery, a webhook by its host only (a URL may carry a
    // token); other decisions' escalations are not listed.
    await insertTarget({
      db,
      target: {
        kind: "email",
        target: "supervisor",
        events: ["escalated"],
        minAmountCents: null,
        secret: null,
      },
    });
    await enqueueNotifications({ db, event: "escalated", subjectId: "int-2", payload: { title: "Refund" } });
    const recipients = await listEscalationRecipients({ db, interruptIds: ["int-1"] });
    expect(recipients).toEqual([
      {
        interruptId: "int-1",
        kind: "webhook",
        target: `127.0.0.1:${(server.address() as AddressInfo).port}`,
        status: "delivered",
      },
    ]);
    const second = await listEscalationRecipients({ db, interruptIds: ["int-2"] });
    expect(second.map((r) => [r.kind, r.target, r.status]).sort()).toEqual([
      ["email", "supervisor", "queued"],
      ["webhook", `127.0.0.1:${(server.address() as AddressInfo).port}`, "queued"],
    ]);
    expect(await listEscalationRecipients({ db, interruptIds: [] })).toEqual([]);
  });
});
