import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { InvolvedPrincipal } from "@/lib/db/queries/involved";

/**
 * Four-eyes, shared by the agents' decision policies: refuse `principal` when they supplied input that led to the
 * request (403 `forbidden:four_eyes_own_thread` or `code`, saying how). `kinds` narrows who counts (e.g. editors only).
 */
export function refuseOwnInput({
  principal,
  involved,
  what,
  kinds,
  code = "forbidden:four_eyes_own_thread",
}: {
  principal: Principal;
  involved: InvolvedPrincipal[];
  /** What someone else must do, e.g. "approve its refund". */
  what: string;
  kinds?: InvolvedPrincipal["kind"][];
  code?: `forbidden:${string}`;
}): void {
  const own = involved.find((p) => p.id === principal.id && (!kinds || kinds.includes(p.kind)));
  if (!own) return;
  throw new AppError(code, `You ${own.why}: someone else must ${what}.`, {
    rule: kinds ? "not_own_edit" : "not_own_thread",
    because: own.why,
  });
}
