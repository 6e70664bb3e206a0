import { randomBytes } from "node:crypto";
import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { ROLES } from "@/lib/contract/roles";
import { recordAudit } from "@/lib/db/queries/audit";
import { deleteTarget, insertTarget, listTargets, NOTIFY_EVENTS } from "@/lib/db/queries/notifications";
import { json, route } from "@/lib/http/route";
import { env } from "@/lib/platform/env";
import { checkWebhookTarget } from "@/lib/platform/net/webhook-target";

export const dynamic = "force-dynamic";

const targetBody = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("add"),
    /** `webhook`: POST to `target` (an http(s) URL), signed with HMAC-SHA256; `email`: to every user of role `target`. */
    kind: z.enum(["webhook", "email"]),
    target: z.string().trim().min(1).max(2000),
    events: z.array(z.enum(NOTIFY_EVENTS)).min(1).max(NOTIFY_EVENTS.length),
    /** For `new_item`: only items of at least this amount (cents). */
    minAmountCents: z.number().int().min(0).max(1_000_000_000).nullable().default(null),
  }),
  z.strictObject({ op: z.literal("remove"), id: z.string().min(1).max(200) }),
]);

/** Notification targets (admins): webhooks and role emails for new items, overdue, escalated and failed effects. */
export const GET = route(
  { name: "GET /api/admin/notifications", access: "admin" },
  async ({ database: { db } }) => json({ targets: await listTargets({ db }) }),
);

/**
 * Add a target (a webhook's signing secret is made here and shown once: `{ target, secret }`) or remove one. Audited.
 */
export const POST = route<Record<string, never>, z.infer<typeof targetBody>>(
  {
    name: "POST /api/admin/notifications",
    access: "admin",
    body: { schema: targetBody, code: "bad_request:notifications", what: "The notification target" },
  },
  async ({ body, principal, database: { db } }) => {
    if (body.op === "add") {
      if (body.kind === "webhook" && !/^https?:\/\/[^\s]+$/i.test(body.target)) {
        throw new AppError("unprocessable:notifications", "A webhook target is an http(s) URL.", {
          fields: ["target"],
        });
      }
      if (body.kind === "webhook") {
        const check = await checkWebhookTarget(body.target, env.WEBHOOK_ALLOW_PRIVATE);
        if (!check.ok) {
          throw new AppError("unprocessable:webhook_target", check.reason, { fields: ["target"] });
        }
      }
      if (body.kind === "email" && !(ROLES as readonly string[]).includes(body.target)) {
        throw new AppError("unprocessable:notifications", `An email target is a role: ${ROLES.join(", ")}.`, {
          fields: ["target"],
        });
      }
    }
    return db.transaction(async (tx) => {
      let result: Record<string, unknown>;
      if (body.op === "add") {
        const secret = body.kind === "webhook" ? randomBytes(32).toString("hex") : null;
        const { op: _op, ...fields } = body;
        result = { target: await insertTarget({ db: tx, target: { ...fields, secret } }), secret };
      } else {
        if (!(await deleteTarget({ db: tx, id: body.id }))) {
          throw new AppError("not_found:notification_target", "No such notification target.");
        }
        result = { removed: body.id };
      }
      const detail =
        body.op === "add" ? { op: "add", kind: body.kind, target: body.target, events: body.events } : body;
      await recordAudit({
        db: tx,
        entries: [{ action: "queue_settings", actor: principal, detail: { notifications: detail } }],
      });
      return json(result);
    });
  },
);
