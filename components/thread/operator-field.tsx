"use client";

import { useId } from "react";

/** "Operating as": the name recorded with every decision taken from this browser. */
export function OperatorField({ name, onChange }: { name: string; onChange: (name: string) => void }) {
  const id = useId();
  return (
    <div className="flex items-center gap-2">
      <label htmlFor={id} className="text-sm font-medium text-slate-800">
        Operating as
      </label>
      <input
        id={id}
        data-testid="operator-name"
        value={name}
        maxLength={100}
        autoComplete="name"
        spellCheck={false}
        onChange={(e) => onChange(e.target.value)}
        onBlur={(e) => {
          if (!e.target.value.trim()) onChange("operator");
        }}
        className="w-36 rounded-md border border-slate-500 bg-white px-2 py-1 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-indigo-600"
      />
    </div>
  );
}
