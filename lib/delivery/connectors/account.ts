import "server-only";
import type { Queryable } from "@/lib/db/tx";
import { applyAccountChange } from "@/lib/shop/accounts";
import { defaultTaskActions, type EffectConnector, type EffectKind, refused, retryable } from "../connector";

/** A change to a customer's account: the field and its old → new value. */
export const accountKind: EffectKind = {
  kind: "account_update",
  summary: (p) =>
    `Account change: ${String(p.field ?? "")} ${p.from ? `“${String(p.from)}” → ` : "→ "}“${String(p.to ?? "")}”`,
  taskActions: defaultTaskActions,
  authority: (p) => ({
    effect: "account_change",
    accountEmail: String(p.account ?? ""),
    field: String(p.field ?? ""),
    to: String(p.to ?? ""),
  }),
};

/**
 * Applies approved account changes to the shop's customer accounts (`account_update` effects). The accounts live in
 * this database, so a delivery is one transaction: the change applied once, and the customer's confirmation queued
 * with it. A database error is transient (tried again with back-off, then an operator task); a change that does not
 * exist is refused for good.
 */
export function accountConnector(db: Queryable): EffectConnector {
  return {
    kind: accountKind.kind,
    async deliver(effect) {
      const changeId = effect.payload.changeId;
      if (typeof changeId !== "string") return refused("the effect names no account change");
      try {
        const { change } = await applyAccountChange({ db, changeId });
        return { ok: true, providerRef: `account:${change.id}` };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return message.startsWith("applyAccountChange: no change") ? refused(message) : retryable(message);
      }
    },
  };
}
