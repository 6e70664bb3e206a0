import "server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { type Principal, ROLES } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import {
  deleteTarget,
  insertTarget,
  listTargets,
  NOTIFY_EVENTS,
  type TargetView,
} from "@/lib/db/queries/notifications";
import type { Queryable } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";
import { checkWebhookTarget } from "@/lib/platform/net/webhook-target";

/*
 * The queue's notification targets (admin settings): webhooks and role emails told of new items, overdue and
 * escalated decisions and failed effects.
 */

/** A change to the notification targets (`POST /api/admin/notifications`): add one, or remove one by id. */
export const notificationTargetChange = z.discriminatedUnion("op", [
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
export type NotificationTargetChange = z.infer<typeof notificationTargetChange>;

/** The notification targets, oldest first (a webhook's secret is never read back: `signed` says it has one). */
export function readNotificationTargets({ db }: { db: Queryable }): Promise<TargetView[]> {
  return listTargets({ db });
}

/**
 * Add a target — a webhook's signing secret is made here and returned once (`{ target, secret }`) — or remove one
 * (`{ removed }`; 404 `not_found:notification_target` when there is none), in one transaction with its audit entry.
 * A webhook must be an http(s) URL that may be reached (422 `unprocessable:webhook_target` otherwise), an email
 * target a role.
 */
export async function changeNotificationTarget({
  db,
  change,
  by,
}: {
  db: AppDb;
  change: NotificationTargetChange;
  by: Principal;
}): Promise<{ target: TargetView; secret: string | null } | { removed: string }> {
  if (change.op === "add") await checkTarget(change);
  return db.transaction(async (tx) => {
    let result: { target: TargetView; secret: string | null } | { removed: string };
    if (change.op === "add") {
      const secret = change.kind === "webhook" ? randomBytes(32).toString("hex") : null;
      const { op: _op, ...fields } = change;
      result = { target: await insertTarget({ db: tx, target: { ...fields, secret } }), secret };
    } else {
      if (!(await deleteTarget({ db: tx, id: change.id }))) {
        throw new AppError("not_found:notification_target", "No such notification target.");
      }
      result = { removed: change.id };
    }
    const detail =
      change.op === "add"
        ? { op: "add", kind: change.kind, target: change.target, events: change.events }
        : change;
    await recordAudit({
      db: tx,
      entries: [{ action: "queue_settings", actor: by, detail: { notifications: detail } }],
    });
    return result;
  });
}

/** Refuse a target nothing could be delivered to, or a webhook to an address it may not reach. */
async function checkTarget(add: Extract<NotificationTargetChange, { op: "add" }>): Promise<void> {
  if (add.kind === "webhook" && !/^https?:\/\/[^\s]+$/i.test(add.target)) {
    throw new AppError("unprocessable:notifications", "A webhook target is an http(s) URL.", {
      fields: ["target"],
    });
  }
  if (add.kind === "webhook") {
    const check = await checkWebhookTarget(add.target, env.WEBHOOK_ALLOW_PRIVATE);
    if (!check.ok) {
      throw new AppError("unprocessable:webhook_target", check.reason, { fields: ["target"] });
    }
  }
  if (add.kind === "email" && !(ROLES as readonly string[]).includes(add.target)) {
    throw new AppError("unprocessable:notifications", `An email target is a role: ${ROLES.join(", ")}.`, {
      fields: ["target"],
    });
  }
}
