"use client";

import { type FormEvent, useState } from "react";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { controlClass } from "@/components/ui/field";
import type { SideEffectWarning } from "@/lib/runtime/side-effects";
import { parseForkValues } from "./fork-values";
import { SideEffectNotice } from "./side-effect-notice";
import { useSideEffects } from "./use-side-effects";

/** `POST /api/threads/{id}/fork` → 202. */
export interface ForkResponse {
  runId: string;
  forkedFrom: string;
  checkpointId: string;
  warnings: SideEffectWarning[];
  events: string;
}

const field = `mt-1 ${controlClass}`;

/**
 * Time travel: start a new branch from this checkpoint, optionally editing state first (as a node, which decides
 * what runs next). Warns beforehand what the branch may repeat. The branch becomes the thread's head and runs in the
 * background; its decisions are taken on the thread page.
 */
export function ForkPanel({
  threadId,
  checkpointId,
  version,
  nodes,
  channels,
  onForked,
}: {
  threadId: string;
  checkpointId: string;
  version: string;
  nodes: readonly string[];
  channels: readonly string[];
  onForked: (result: ForkResponse) => void;
}) {
  const { warnings, failed } = useSideEffects(threadId, checkpointId, version);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState("");
  const [asNode, setAsNode] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const parsed = editing ? parseForkValues(text, channels) : ({ ok: true, values: undefined } as const);

  const fork = async (event: FormEvent) => {
    event.preventDefault();
    if (!parsed.ok) return setProblem(parsed.error);
    setBusy(true);
    setProblem(null);
    try {
      const body = {
        checkpointId,
        ...(parsed.values ? { values: parsed.values } : {}),
        ...(editing && asNode ? { asNode } : {}),
      };
      const forked = await postJson<ForkResponse>(`/api/threads/${encodeURIComponent(threadId)}/fork`, body);
      onForked(forked);
    } catch (e) {
      setProblem(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={fork} className="space-y-3" data-testid="fork-panel" aria-labelledby="fork-heading">
      <h3 id="fork-heading" className="text-sm font-semibold">
        Fork from here
      </h3>
      <p className="text-sm text-slate-700">
        Starts a new branch at this checkpoint and runs the agent from it. The current line stays in the
        history as a branch of its own.
      </p>
      <SideEffectNotice warnings={warnings} failed={failed} />
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" checked={editing} onChange={(e) => setEditing(e.target.checked)} />
        Edit the state before forking
      </label>
      {editing && (
        <div className="space-y-3 rounded-md bg-slate-50 p-3">
          <div>
            <label htmlFor="fork-values" className="block text-xs font-semibold text-slate-700">
              State changes (JSON object)
            </label>
            <textarea
              id="fork-values"
              data-testid="fork-values"
              rows={5}
              className={`${field} font-mono`}
              value={text}
              onChange={(e) => setText(e.target.value)}
              placeholder='{"requested": 10000}'
              aria-invalid={!parsed.ok}
              aria-describedby="fork-values-help"
            />
            <p
              id="fork-values-help"
              className={`mt-1 text-xs ${parsed.ok ? "text-slate-600" : "text-red-700"}`}
            >
              {parsed.ok
                ? `Keys you may set: ${channels.join(", ")}. Decisions, amounts approved and what was paid or sent cannot be edited: fork from before the question and answer it again.`
                : parsed.error}
            </p>
          </div>
          <div>
            <label htmlFor="fork-as-node" className="block text-xs font-semibold text-slate-700">
              Apply as if this node wrote it (optional)
            </label>
            <select
              id="fork-as-node"
              className={field}
              value={asNode}
              onChange={(e) => setAsNode(e.target.value)}
            >
              <option value="">Default: the node that wrote this checkpoint</option>
              {nodes.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </div>
        </div>
      )}
      {problem && (
        <p role="alert" className="rounded-md bg-red-50 p-2 text-sm text-red-800" data-testid="fork-error">
          {problem}
        </p>
      )}
      <Button type="submit" disabled={busy || !parsed.ok} data-testid="fork-submit">
        {busy ? "Forking…" : "Fork from here"}
      </Button>
    </form>
  );
}
