import type { ToolCall } from "@ag-ui/core";
import { JsonTree } from "@/components/ui/json-tree";

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** A tool the agent called: its name, arguments and result (JSON shown as a tree of text, never as HTML). */
export function ToolCallCard({ call, result }: { call: ToolCall; result?: string }) {
  const args = call.function.arguments;
  const parsedResult = result === undefined ? null : parseJson(result);
  return (
    <li
      className="rounded-lg border border-slate-200 bg-slate-50 p-3 text-sm"
      data-testid="tool-call"
      data-tool-name={call.function.name}
      data-tool-call-id={call.id}
    >
      <p className="text-slate-700">
        <span className="text-xs font-semibold uppercase tracking-wide text-slate-600">Tool call </span>
        <code className="font-mono font-semibold text-slate-900">{call.function.name}</code>
        <code className="ml-1 break-all font-mono text-xs text-slate-800" data-testid="tool-args">
          {args || "…"}
        </code>
      </p>
      <div className="mt-2" data-testid="tool-result">
        {parsedResult === null ? (
          <p className="text-slate-600">Waiting for the result…</p>
        ) : parsedResult.ok ? (
          <JsonTree value={parsedResult.value} label="result" defaultOpen={false} />
        ) : (
          <pre className="whitespace-pre-wrap break-words font-mono text-xs text-slate-800">{result}</pre>
        )}
      </div>
    </li>
  );
}
