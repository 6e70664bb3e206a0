import { ageText } from "./age";

/** Time left until a decision is due ("3 h left"), or how long it is overdue, and whether it was escalated. */
export function TimeLeft({ ms, escalated }: { ms: number; escalated: boolean }) {
  const overdue = ms < 0;
  return (
    <span className="inline-flex flex-col gap-0.5" data-testid="time-left" data-overdue={overdue}>
      <span className={overdue ? "font-semibold text-red-700" : "text-slate-700"}>
        {overdue ? `Overdue ${ageText(-ms)}` : `${ageText(ms)} left`}
      </span>
      {escalated && (
        <span
          className="w-fit rounded bg-red-100 px-1.5 text-xs font-semibold text-red-800"
          data-testid="escalated-badge"
        >
          Escalated
        </span>
      )}
    </span>
  );
}
