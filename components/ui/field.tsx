import type { ReactNode } from "react";

/** Text inputs, textareas and selects: a visible border (3:1 against white), visible focus, a disabled look. */
export const controlClass =
  "block w-full rounded-md border border-slate-500 bg-white px-3 py-2 text-sm text-slate-900 shadow-sm " +
  "focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-indigo-600 " +
  "disabled:cursor-not-allowed disabled:bg-slate-100 disabled:text-slate-600 aria-[invalid=true]:border-red-700";

/** A label with an optional quieter hint on the same line. */
export function FieldLabel({
  htmlFor,
  children,
  hint,
}: {
  htmlFor: string;
  children: ReactNode;
  hint?: ReactNode;
}) {
  return (
    <label htmlFor={htmlFor} className="mb-1 block text-sm font-medium text-slate-900">
      {children}
      {hint ? <span className="ml-1 font-normal text-slate-600">{hint}</span> : null}
    </label>
  );
}

/** A message tied to a control with `aria-describedby`; `role="alert"` when it reports an error. */
export function FieldMessage({ id, children, error }: { id: string; children: ReactNode; error?: boolean }) {
  return (
    <p
      id={id}
      role={error ? "alert" : undefined}
      className={`mt-1 text-sm ${error ? "text-red-800" : "text-slate-600"}`}
    >
      {children}
    </p>
  );
}

/**
 * How much of a field's limit is used ("120 / 2,000 characters"), shown under it so nothing is cut silently; the
 * browser's `maxLength` stops typing at the limit, and this says so.
 */
export function LengthCounter({ id, length, limit }: { id: string; length: number; limit: number }) {
  const full = length >= limit;
  return (
    <p
      id={id}
      data-testid="length-counter"
      aria-live={full ? "polite" : "off"}
      className={`mt-1 text-xs ${full ? "font-medium text-amber-800" : "text-slate-600"}`}
    >
      {length.toLocaleString("en")} / {limit.toLocaleString("en")} characters
      {full ? " — the limit is reached" : ""}
    </p>
  );
}
