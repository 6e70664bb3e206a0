import type { ReactNode } from "react";

/** The header row of an inbox table: one `<th scope="col">` per column, in the inbox's table style. */
export function TableHead({ columns }: { columns: { key: string; label: ReactNode; align?: "right" }[] }) {
  return (
    <thead className="bg-slate-50 text-left text-xs font-semibold uppercase tracking-wide text-slate-600 max-sm:sr-only">
      <tr>
        {columns.map((column) => (
          <th
            key={column.key}
            scope="col"
            className={`px-4 py-2${column.align === "right" ? " text-right" : ""}`}
          >
            {column.label}
          </th>
        ))}
      </tr>
    </thead>
  );
}
