"use client";

import { useState } from "react";

/**
 * A collapsible JSON tree. Everything is rendered as text nodes (React escapes it): payloads from agents or
 * customers are never interpreted as HTML.
 */
export function JsonTree({
  value,
  label,
  defaultOpen = true,
}: {
  value: unknown;
  label?: string;
  defaultOpen?: boolean;
}) {
  return (
    <div data-raw className="font-mono text-xs leading-relaxed text-slate-800">
      <Node name={label} value={value} depth={0} defaultOpen={defaultOpen} />
    </div>
  );
}

function Node({
  name,
  value,
  depth,
  defaultOpen,
}: {
  name?: string;
  value: unknown;
  depth: number;
  defaultOpen: boolean;
}) {
  const [open, setOpen] = useState(defaultOpen && depth < 2);
  const isObject = value !== null && typeof value === "object";
  const key = name === undefined ? null : <span className="text-slate-500">{name}: </span>;
  if (!isObject) {
    return (
      <div style={{ paddingLeft: depth * 12 }}>
        {key}
        <span className={typeof value === "string" ? "text-emerald-800" : "text-indigo-800"}>
          {JSON.stringify(value)}
        </span>
      </div>
    );
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  const brackets = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  return (
    <div style={{ paddingLeft: depth * 12 }}>
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        className="rounded text-left hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-600"
      >
        <span aria-hidden="true">{open ? "▾ " : "▸ "}</span>
        {key}
        {brackets[0]}
        {!open && `… ${entries.length} ${entries.length === 1 ? "item" : "items"}${brackets[1]}`}
      </button>
      {open && (
        <>
          {entries.map(([k, v]) => (
            <Node key={k} name={k} value={v} depth={1} defaultOpen={defaultOpen && depth < 1} />
          ))}
          <div>{brackets[1]}</div>
        </>
      )}
    </div>
  );
}
