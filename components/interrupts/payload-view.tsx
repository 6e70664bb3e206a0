import { humanize } from "@/lib/contract/humanize";
import { fieldWords } from "@/lib/contract/questions/tool-review";

/*
 * Any question, readable without a form (a viewer's page): its fields as labelled lines — text as written, with its
 * line breaks (never `\n` escapes), lists as lists, nested parts indented. Works for every kind of question, and for
 * one this console has no form for, because it reads the payload, not a schema of ours.
 */

const HIDDEN = new Set(["action", "title", "format", "argsSchema"]);

function Value({ value }: { value: unknown }) {
  if (value === null || value === undefined || value === "") return <span className="text-slate-500">—</span>;
  if (typeof value === "string")
    return (
      <span className="whitespace-pre-wrap break-words">
        <bdi>{value}</bdi>
      </span>
    );
  if (typeof value === "number" || typeof value === "boolean") return <span>{String(value)}</span>;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== "object" || v === null))
      return <span>{value.map((v) => String(v)).join(", ")}</span>;
    return (
      <ol className="list-decimal space-y-2 pl-5">
        {value.map((v, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a read-only rendering of a fixed list
          <li key={i}>
            <Value value={v} />
          </li>
        ))}
      </ol>
    );
  }
  return <Fields value={value as Record<string, unknown>} />;
}

function Fields({ value }: { value: Record<string, unknown> }) {
  const entries = Object.entries(value).filter(([k]) => !HIDDEN.has(k));
  return (
    <dl className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-1 text-sm">
      {entries.map(([key, v]) => (
        <div key={key} className="contents">
          <dt className="text-slate-600">{humanize(fieldWords(key))}</dt>
          <dd className="text-slate-900">
            <Value value={v} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function PayloadView({ payload }: { payload: unknown }) {
  return (
    <div data-testid="payload-view">
      <Value value={payload} />
    </div>
  );
}
