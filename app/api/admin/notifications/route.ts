import { json, route } from "@/lib/http/route";
import {
  changeNotificationTarget,
  type NotificationTargetChange,
  notificationTargetChange,
  readNotificationTargets,
} from "@/lib/queue/settings/notification-targets";

export const dynamic = "force-dynamic";

/** Notification targets (admins): webhooks and role emails for new items, overdue, escalated and failed effects. */
export const GET = route(
  { name: "GET /api/admin/notifications", access: "admin" },
  async ({ database: { db } }) => json({ targets: await readNotificationTargets({ db }) }),
);

/**
 * Add a target (a webhook's signing secret is made here and shown once: `{ target, secret }`) or remove one. Audited.
 */
export const POST = route<Record<string, never>, NotificationTargetChange>(
  {
    name: "POST /api/admin/notifications",
    access: "admin",
    body: {
      schema: notificationTargetChange,
      code: "bad_request:notifications",
      what: "The notification target",
    },
  },
  async ({ body, principal, database: { db } }) =>
    json(await changeNotificationTarget({ db, change: body, by: principal })),
);
