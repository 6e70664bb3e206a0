import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { type EffectTaskAction, type EffectView, STRIPE_TEST_REF } from "@/lib/contract/wire";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { getEffect, isOpenTaskStatus, listThreadEffects, resolveEffectTask } from "@/lib/db/queries/effects";
import { getThread } from "@/lib/db/queries/threads";
import type { Effect } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { defaultTaskActions } from "@/lib/delivery/connector";
import { effectKind } from "@/lib/delivery/kinds";

/**
 * What an operator may do about a failed or unconfirmed effect of this kind. Only an unconfirmed email can be
 * confirmed delivered: a failed one was refused, so there is nothing that could have arrived.
 */
export function taskActionsFor(kind: string, status: string, lastError?: string | null): EffectTaskAction[] {
  return (effectKind(kind)?.taskActions ?? defaultTaskActions)(status, lastError);
}

/** Every task action an effect of this kind can ever offer, whatever its status. */
function anyTaskActionFor(kind: string): EffectTaskAction[] {
  return [...new Set([...taskActionsFor(kind, "failed"), ...taskActionsFor(kind, "unconfirmed")])];
}

function summaryOf(effect: Effect): string {
  return (
    effectKind(effect.kind)?.summary(effect.payload as Record<string, unknown>) ?? `${effect.kind} effect`
  );
}

/**
 * Whether a delivery went to a simulator, not the world: the in-process payment simulator (`sim_` references) or the
 * .eml files written without SMTP_URL (`file:` references).
 */
export function isSimulatedDelivery(providerRef: string | null): boolean {
  return (
    providerRef !== null &&
    (providerRef.startsWith("sim_") ||
      providerRef.startsWith("file:") ||
      providerRef.startsWith(STRIPE_TEST_REF))
  );
}

/** An `effects` row as the API and the thread page show it. */
export function toEffectView(effect: Effect): EffectView {
  const open = isOpenTaskStatus(effect.status);
  const hadTask = open || effect.resolution !== null;
  return {
    id: effect.id,
    kind: effect.kind,
    idempotencyKey: effect.idempotencyKey,
    recordId: effect.recordId,
    status: effect.status,
    attempts: effect.attempts,
    lastError: effect.lastError,
    providerRef: effect.providerRef,
    simulated: isSimulatedDelivery(effect.providerRef),
    summary: summaryOf(effect),
    createdAt: effect.createdAt.toISOString(),
    nextAttemptAt: effect.status === "queued" ? effect.nextAttemptAt.toISOString() : null,
    deliveredAt: effect.deliveredAt?.toISOString() ?? null,
    task: hadTask
      ? {
          open,
          actions: open ? taskActionsFor(effect.kind, effect.status, effect.lastError) : [],
          resolution: effect.resolution,
          resolvedBy: effect.resolvedBy,
          resolvedAt: effect.resolvedAt?.toISOString() ?? null,
        }
      : null,
  };
}

/** A thread's side effects with their live delivery status, oldest first. */
export async function listEffectViews({ db, threadId }: { db: Queryable; threadId: string }) {
  return (await listThreadEffects({ db, threadId })).map(toEffectView);
}

/** A thread's side effects (`GET /api/threads/{id}/effects`): 404 `not_found:thread` when there is no such thread. */
export async function readThreadEffects({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<EffectView[]> {
  if (!(await getThread({ db, threadId }))) {
    throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  }
  return listEffectViews({ db, threadId });
}

/**
 * An operator acts on a failed or unconfirmed effect's task: deliver it again (`retry`, a fresh round of attempts), or
 * close it — refunded by hand, or handled otherwise (an unconfirmed email that did arrive). One transaction with its
 * audit entry; a task already acted on (or an effect with no open task) is refused with `conflict:effect_task` naming
 * its status.
 */
export async function actOnEffectTask({
  db,
  threadId,
  effectId,
  action,
  note,
  principal,
}: {
  db: AppDb;
  threadId: string;
  effectId: string;
  action: EffectTaskAction;
  note?: string;
  principal: Principal;
}): Promise<EffectView> {
  return db.transaction(async (tx) => {
    const effect = await getEffect({ db: tx, effectId });
    if (!effect || effect.threadId !== threadId) {
      throw new AppError("not_found:effect", `Thread ${threadId} has no effect ${effectId}.`);
    }
    if (!anyTaskActionFor(effect.kind).includes(action)) {
      throw new AppError("bad_request:effect_task", `A ${effect.kind} effect cannot be marked ${action}.`, {
        fields: ["action"],
      });
    }
    if (
      isOpenTaskStatus(effect.status) &&
      !taskActionsFor(effect.kind, effect.status, effect.lastError).includes(action)
    ) {
      throw new AppError(
        "bad_request:effect_task",
        effect.lastError?.startsWith("provider:refund_failed")
          ? `The payment provider failed this refund: a retry would find the same failed refund. Pay the customer another way and mark it refunded_manually, or mark it handled.`
          : `A ${effect.status} ${effect.kind} effect cannot be marked ${action}: only an unconfirmed one may have arrived.`,
        { fields: ["action"], status: effect.status },
      );
    }
    const updated = await resolveEffectTask({
      db: tx,
      effectId,
      action,
      resolvedBy: principal.label,
      // Compare-and-set on the status the action was judged against: an email that went from unconfirmed to
      // failed meanwhile (sent again and refused) cannot be closed as delivered.
      onlyIf: action === "confirmed_delivered" ? ["unconfirmed"] : undefined,
    });
    if (!updated) {
      throw new AppError(
        "conflict:effect_task",
        `The effect is ${effect.status}: there is no open task on it.`,
        {
          status: effect.status,
          resolvedBy: effect.resolvedBy,
          resolvedAt: effect.resolvedAt?.toISOString() ?? null,
        },
      );
    }
    await recordAudit({
      db: tx,
      entries: [
        {
          action: "effect_task",
          actor: principal,
          threadId,
          answer: { action, ...(note ? { note } : {}) },
          detail: { effectId, kind: effect.kind, attempts: effect.attempts, lastError: effect.lastError },
        },
      ],
    });
    return toEffectView(updated);
  });
}
