import { LocalTime } from "@/components/ui/local-time";
import { principalLabel } from "@/lib/contract/humanize";
import type { DecisionView } from "@/lib/contract/views/thread";
import { summarizeAnswer } from "./answer-summary";
import type { ClosedItem } from "./thread-state";

/** Why a form this page showed is closed: who decided, what and when (from the 409, or from the ledger). */
export function DecidedElsewhere({ item, decision }: { item: ClosedItem; decision?: DecisionView }) {
  if (decision?.status === "superseded" || item.conflict?.superseded) {
    return (
      <p className="rounded-md bg-slate-100 p-3 text-sm text-slate-800" data-testid="decided-elsewhere">
        This decision no longer applies: the thread moved on.
      </p>
    );
  }
  const by = item.conflict?.resolvedBy ?? decision?.resolvedBy ?? null;
  const at = item.conflict?.resolvedAt ?? decision?.resolvedAt ?? null;
  const answer = item.conflict?.answer ?? decision?.answer;
  const known = by !== null || answer !== undefined;
  return (
    <div
      role="status"
      className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950"
      data-testid="decided-elsewhere"
    >
      {known ? (
        <p>
          <strong className="font-semibold">
            <bdi>{by ? principalLabel(by) : "Someone else"}</bdi>
          </strong>{" "}
          already decided this
          {at ? (
            <>
              {" "}
              at <LocalTime iso={at} />
            </>
          ) : null}
          {answer !== undefined ? <>: {summarizeAnswer(item.action, answer)}</> : null}.
        </p>
      ) : (
        <p>This decision was taken elsewhere (another tab or operator).</p>
      )}
      <p className="mt-1 text-amber-900">The form below is closed; nothing was sent from this page.</p>
    </div>
  );
}
