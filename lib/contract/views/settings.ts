/*
 * What admins set, as the settings pages show it: deadline policies, notification targets, teams. The server reads
 * them in lib/db/queries/{deadlines,notifications,teams}.ts and changes them through lib/queue/settings.
 */

/** The events a notification target can subscribe to. */
export const NOTIFY_EVENTS = ["new_item", "overdue", "escalated", "effect_failed"] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

export interface SlaPolicyView {
  id: string;
  action: string;
  minAmountCents: number;
  dueSeconds: number;
  expiryAnswer: { status: "resolved" | "cancelled"; payload?: unknown } | null;
}

export interface TargetView {
  id: string;
  kind: "webhook" | "email";
  target: string;
  events: NotifyEvent[];
  minAmountCents: number | null;
  enabled: boolean;
  /** Whether a signing secret is set (the secret itself is shown once, when created). */
  signed: boolean;
}

/** A team as the admin page shows it. */
export interface TeamView {
  id: string;
  name: string;
  members: { userId: string; email: string; role: string }[];
  /** The agents (`AgentDefinition.id`) it owns. */
  agents: string[];
}
