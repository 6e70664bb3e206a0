import type { Delta } from "jsondiffpatch";
import { type Change, flattenDelta, groupByKey, preview } from "./diff-lines";

const KIND: Record<Change["kind"], { label: string; sign: string; style: string }> = {
  added: { label: "added", sign: "+", style: "bg-emerald-50 text-emerald-800" },
  changed: { label: "changed", sign: "~", style: "bg-amber-50 text-amber-900" },
  removed: { label: "removed", sign: "−", style: "bg-red-50 text-red-800" },
  moved: { label: "moved", sign: "↕", style: "bg-slate-100 text-slate-800" },
  text: { label: "edited", sign: "~", style: "bg-amber-50 text-amber-900" },
};

/** A value as one line of text; the whole value (pretty JSON) behind a disclosure when the line is cut. */
function Value({ value }: { value: unknown }) {
  const { text, truncated } = preview(value);
  if (!truncated) return <code className="break-all">{text}</code>;
  return (
    <details>
      <summary className="cursor-pointer">
        <code className="break-all">{text}</code>
      </summary>
      <pre className="mt-1 max-h-64 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-2">
        {JSON.stringify(value, null, 2)}
      </pre>
    </details>
  );
}

/** The change itself: old → new for a changed value, the value for an added or removed one. */
function ChangeValue({ change }: { change: Change }) {
  switch (change.kind) {
    case "changed":
      return (
        <div className="flex flex-wrap items-baseline gap-x-2 gap-y-1">
          <Value value={change.before} />
          <span className="font-sans text-slate-600">
            <span aria-hidden="true">→</span>
            <span className="sr-only">becomes</span>
          </span>
          <Value value={change.after} />
        </div>
      );
    case "added":
      return <Value value={change.after} />;
    case "removed":
      return (
        <span className="text-slate-600 line-through decoration-red-700">
          <Value value={change.before} />
        </span>
      );
    case "moved":
      return <span className="font-sans">to position {change.to}</span>;
    case "text":
      return <code className="whitespace-pre-wrap">{change.patch}</code>;
  }
}

/**
 * What this checkpoint changed against its parent, grouped by state key: one row per added, changed or removed
 * value with old → new, as text (values are data, never markup).
 */
export function DiffTable({
  delta,
  against = "the parent checkpoint",
  testId = "checkpoint-diff",
}: {
  delta: Delta | null;
  /** What the changes are against, in words ("the parent checkpoint", "step 4"). */
  against?: string;
  testId?: string;
}) {
  const groups = groupByKey(flattenDelta(delta));
  if (groups.length === 0) {
    return (
      <p className="text-sm text-slate-700" data-testid="diff-empty">
        No state change against {against === "the parent checkpoint" ? "the parent" : against}.
      </p>
    );
  }
  return (
    <table className="w-full table-fixed text-left text-xs" data-testid={testId}>
      <caption className="sr-only">Changes against {against}</caption>
      <thead className="text-slate-600">
        <tr>
          <th scope="col" className="w-24 py-1 pr-2 font-semibold">
            Change
          </th>
          <th scope="col" className="w-36 py-1 pr-2 font-semibold">
            Path
          </th>
          <th scope="col" className="py-1 font-semibold">
            Old → new
          </th>
        </tr>
      </thead>
      {groups.map(([key, changes]) => (
        <tbody
          key={key}
          data-testid="diff-key"
          data-key={key}
          className="border-t border-slate-200 align-top"
        >
          {changes.map((change) => {
            const kind = KIND[change.kind];
            return (
              <tr key={`${change.kind}:${change.path}`} data-change={change.kind}>
                <td className="py-1.5 pr-2">
                  <span className={`rounded px-1.5 py-0.5 font-semibold ${kind.style}`}>
                    <span aria-hidden="true">{kind.sign} </span>
                    {kind.label}
                  </span>
                </td>
                {/* Paths and values are the thread's state: data a supervisor inspects, not the console's words. */}
                <td data-raw className="break-all py-1.5 pr-2 font-mono text-slate-900">
                  {change.path}
                </td>
                <td data-raw className="min-w-0 py-1.5 font-mono text-slate-900">
                  <ChangeValue change={change} />
                </td>
              </tr>
            );
          })}
        </tbody>
      ))}
    </table>
  );
}
