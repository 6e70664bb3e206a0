import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { type Authorization, formatMoney } from "@/lib/contract/wire";
import { coveredBy, limitsBinding, lockAuthority, spentBy } from "@/lib/db/queries/authority";
import type { Queryable } from "@/lib/db/tx";

/*
 * Delegated authority (issue 57), in the one policy path every decision takes (lib/runtime/runs/settle.ts: the AG-UI
 * resume, the decision route, bulk, the keyboard) and in the check before the click (./may-decide.ts): a person may let
 * no more money leave by one decision, by all their decisions of today, or to one customer over 30 days, than the
 * limits set for them and for their teams allow. Over a limit the decision is refused with its code, nothing written, and the refusal names who may take
 * it instead (someone whose authority covers it).
 */

/** The money an answer lets leave: what its authorizations name in cents (refunds, store credit, vouchers). */
export function amountAuthorized(authorizations: readonly Authorization[]): number {
  return authorizations.reduce((sum, a) => sum + ("amountCents" in a ? a.amountCents : 0), 0);
}

/**
 * Refuse `principal` letting `amountCents` leave by one decision of `action` on an `agentId` thread when a limit of
 * theirs (or of a team of theirs) does not cover it: 403 `forbidden:authority_per_decision`,
 * `forbidden:authority_per_day` or `forbidden:authority_per_customer`. `earlierCents`: what the same request already let leave (several answers in one go).
 * `lock`: serialize against the subject's other decisions (when deciding, not when asking before the click).
 */
export async function refuseOverAuthority({
  db,
  principal,
  agentId,
  action,
  amountCents,
  earlierCents = 0,
  currency = null,
  customer = null,
  lock = false,
  memo,
}: {
  db: Queryable;
  principal: Principal;
  agentId: string;
  action: string;
  amountCents: number;
  earlierCents?: number;
  currency?: string | null;
  /** The thread's customer (its data subject), for per-customer limits; null: none known. */
  customer?: string | null;
  lock?: boolean;
  /** Limits already read for this principal in one request (an inbox page asks for many rows), by agent and kind. */
  memo?: Map<string, ReturnType<typeof limitsBinding>>;
}): Promise<void> {
  if (principal.kind !== "user" || amountCents <= 0) return;
  const key = `${agentId}\u0000${action}`;
  let read = memo?.get(key);
  if (!read) {
    read = limitsBinding({ db, userId: principal.id, agentId, action });
    memo?.set(key, read);
  }
  const limits = await read;
  if (limits.length === 0) return;
  const money = (cents: number) => (currency ? formatMoney(cents, currency) : (cents / 100).toFixed(2));
  for (const limit of limits) {
    const whose = limit.subjectKind === "user" ? "Your" : `Your team ${limit.subjectName}'s`;
    const scope = [limit.agentId && `on ${limit.agentId}`, limit.action && `for ${limit.action}`]
      .filter(Boolean)
      .join(" ");
    const refuse = async (code: string, message: string, extra: Record<string, unknown>) => {
      const others = await coveredBy({ db, amountCents, agentId, action, except: principal.id });
      throw new AppError(
        code as `forbidden:${string}`,
        `${message}${others.length ? ` Someone whose authority covers it may: ${others.join(", ")}.` : ""}`,
        {
          rule: "authority",
          limitId: limit.id,
          subject: { kind: limit.subjectKind, id: limit.subjectId, name: limit.subjectName },
          agent: limit.agentId,
          action: limit.action,
          amountCents,
          ...extra,
          escalateTo: others,
        },
      );
    };
    if (limit.perDecisionCents !== null && amountCents > limit.perDecisionCents) {
      await refuse(
        "forbidden:authority_per_decision",
        `${whose} authority${scope ? ` ${scope}` : ""} is ${money(limit.perDecisionCents)} per decision; this one lets ${money(amountCents)} leave.`,
        { perDecisionCents: limit.perDecisionCents },
      );
    }
    if (limit.perDayCents !== null) {
      if (lock) await lockAuthority({ db, limitId: limit.id });
      const spent = (await spentBy({ db, limit })) + earlierCents;
      if (spent + amountCents > limit.perDayCents) {
        await refuse(
          "forbidden:authority_per_day",
          `${whose} authority${scope ? ` ${scope}` : ""} is ${money(limit.perDayCents)} a day; ${money(spent)} left by decisions today, and this one lets ${money(amountCents)} leave.`,
          { perDayCents: limit.perDayCents, spentTodayCents: spent },
        );
      }
    }
    if (limit.perCustomer30dCents !== null && customer) {
      if (lock) await lockAuthority({ db, limitId: `${limit.id}:${customer}` });
      const spent = (await spentBy({ db, limit, customer })) + earlierCents;
      if (spent + amountCents > limit.perCustomer30dCents) {
        await refuse(
          "forbidden:authority_per_customer",
          `${whose} authority${scope ? ` ${scope}` : ""} is ${money(limit.perCustomer30dCents)} per customer over 30 days; ${money(spent)} left for this customer by decisions in that time, and this one lets ${money(amountCents)} leave.`,
          { perCustomer30dCents: limit.perCustomer30dCents, spentForCustomerCents: spent },
        );
      }
    }
  }
}
