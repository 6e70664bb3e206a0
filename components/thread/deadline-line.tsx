"use client";

import { useEffect, useState } from "react";
import { LocalTime } from "@/components/ui/local-time";
import type { DecisionView } from "@/lib/contract/views/thread";

/** "1 h 20 min", "3 min", "40 s". */
function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  return `${Math.round(h / 24)} days`;
}

function recipient(r: DecisionView["escalatedTo"][number]): string {
  const who = r.kind === "email" ? `${r.target}s by email` : `webhook ${r.target}`;
  return r.status === "delivered"
    ? who
    : `${who} (${r.status === "failed" ? "not delivered" : "on its way"})`;
}

/**
 * A pending decision's deadline on the thread page: when it is due and how long is left, or since when it is
 * overdue, and — once escalated — when and to whom. The time left is worked out in the browser after it loads (the
 * server's render and the page's first paint show the same absolute time), and kept current.
 */
export function DeadlineLine({ decision }: { decision: DecisionView }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(timer);
  }, []);
  const due = Date.parse(decision.dueAt);
  const overdue = decision.escalatedAt !== null || (now !== null && now >= due);
  return (
    <p
      className={`mt-0.5 text-xs ${overdue ? "font-semibold text-red-800" : "text-slate-600"}`}
      data-testid="deadline"
      data-overdue={overdue ? "true" : "false"}
      data-escalated={decision.escalatedAt ? "true" : "false"}
    >
      {overdue ? "Overdue since " : "Due "}
      <LocalTime iso={decision.dueAt} />
      {now !== null && !overdue ? ` (in ${span(due - now)})` : null}
      {now !== null && overdue && now > due ? ` (${span(now - due)} ago)` : null}
      {decision.escalatedAt ? (
        <>
          {" · escalated "}
          <LocalTime iso={decision.escalatedAt} />
          {decision.escalatedTo.length > 0
            ? ` to ${decision.escalatedTo.map(recipient).join(", ")}`
            : " (no notification target is set up for escalations)"}
        </>
      ) : null}
    </p>
  );
}
