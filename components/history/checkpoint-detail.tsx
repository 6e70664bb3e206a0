"use client";

import type { ReactNode } from "react";
import { useUser } from "@/components/auth/user-context";
import { actionLabel } from "@/components/ui/action-label";
import { JsonTree } from "@/components/ui/json-tree";
import { LocalTime } from "@/components/ui/local-time";
import { hasRole } from "@/lib/contract/roles";
import type { GraphDrawing } from "@/lib/contract/views/graph";
import type { HistoryCheckpoint } from "@/lib/contract/views/history";
import type { EffectView } from "@/lib/contract/wire";
import { AgentGraph } from "./agent-graph";
import { DiffTable } from "./diff-table";
import { ForkPanel, type ForkResponse } from "./fork-panel";
import { branchName, writtenByText } from "./labels";
import { OutcomeFacts } from "./outcome-facts";
import { useCheckpoint } from "./use-checkpoint";

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className="space-y-2 border-t border-slate-200 pt-4">
      <h3 id={id} className="text-sm font-semibold">
        {title}
      </h3>
      {children}
    </section>
  );
}

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="flex gap-2">
      <dt className="w-24 shrink-0 text-slate-600">{term}</dt>
      <dd className="min-w-0 break-all text-slate-900">{children}</dd>
    </div>
  );
}

/** Everything about the selected checkpoint: who wrote it, the outcome so far, what changed, the state, and a fork. */
export function CheckpointDetail({
  threadId,
  summary,
  nodes,
  channels,
  forkSchema,
  onSelect,
  onForked,
  effects = [],
  forked = true,
  drawing = null,
}: {
  effects?: readonly EffectView[];
  /** The thread version's graph, laid out (null: this server does not have that version). */
  drawing?: GraphDrawing | null;
  /** The thread has more than one branch. */
  forked?: boolean;
  threadId: string;
  summary: HistoryCheckpoint;
  nodes: readonly string[];
  channels: readonly string[];
  forkSchema?: unknown;
  onSelect: (checkpointId: string) => void;
  onForked: (result: ForkResponse) => void;
}) {
  const user = useUser();
  const version = `${summary.interruptCount}|${summary.pausedForHuman}|${summary.childCount}|${summary.isHead}`;
  const { view, loading, error } = useCheckpoint(threadId, summary.checkpointId, version);
  const current = view?.checkpointId === summary.checkpointId ? view : null;

  return (
    <article
      aria-labelledby="detail-heading"
      aria-busy={loading}
      data-testid="checkpoint-detail"
      data-checkpoint-id={current?.checkpointId ?? ""}
      className="space-y-4 rounded-lg border border-slate-200 bg-white p-5 shadow-sm"
    >
      <header className="space-y-2">
        <h2 id="detail-heading" className="text-lg font-semibold">
          Step {summary.number}: {writtenByText(summary.writtenBy)}
        </h2>
        <dl className="space-y-1 text-xs">
          <Fact term="Checkpoint">
            <code>{summary.checkpointId}</code>
            {summary.isHead && " (head: where the next run continues)"}
          </Fact>
          <Fact term="Parent">
            {summary.parentCheckpointId ? (
              <button
                type="button"
                onClick={() => onSelect(summary.parentCheckpointId as string)}
                className="font-mono text-indigo-800 underline underline-offset-2"
              >
                {summary.parentCheckpointId}
              </button>
            ) : (
              "none: the thread's first checkpoint"
            )}
          </Fact>
          <Fact term="Branch">{branchName(summary.branch)}</Fact>
          <Fact term="Source">{summary.source ?? "—"}</Fact>
          <Fact term="Created">
            <LocalTime iso={summary.createdAt} />
          </Fact>
          <Fact term="Runs next">{current ? current.next.join(", ") || "nothing (end)" : "…"}</Fact>
        </dl>
      </header>
      {error && (
        <p role="alert" className="rounded-md bg-red-50 p-2 text-sm text-red-800">
          Could not load this checkpoint: {error}
        </p>
      )}
      {current && (
        <>
          <OutcomeFacts values={current.values} effects={effects} forked={forked} />
          {drawing && (
            <Section id="graph-heading" title="Where this step is in the agent's graph">
              <AgentGraph
                drawing={drawing}
                current={summary.writtenBy.kind === "nodes" ? summary.writtenBy.nodes : []}
                next={current.next}
                step={summary.number}
              />
            </Section>
          )}
          {current.interrupts.length > 0 && (
            <Section id="interrupts-heading" title="The next step asked a person">
              <ul className="space-y-1 text-sm" data-testid="checkpoint-interrupts">
                {current.interrupts.map((i) => (
                  <li key={i.interruptId}>
                    <span className="font-medium">{actionLabel(i.action)}</span> from{" "}
                    <code className="text-xs">{i.node}</code>:{" "}
                    {i.answered ? "answered" : "waiting for an answer"}
                    {titleOf(i.payload) && <span className="text-slate-700"> — {titleOf(i.payload)}</span>}
                  </li>
                ))}
              </ul>
            </Section>
          )}
          <Section id="diff-heading" title="What changed against the parent">
            {current.diff ? (
              <DiffTable delta={current.diff.delta} />
            ) : (
              <p className="text-sm text-slate-700">
                Nothing to compare: this checkpoint has no readable parent.
              </p>
            )}
          </Section>
          <Section id="state-heading" title="State at this checkpoint">
            <JsonTree value={current.values} label="values" />
            <JsonTree
              value={current.messages}
              label={`messages (${current.messages.length})`}
              defaultOpen={false}
            />
            {current.pendingWrites.length > 0 && (
              <JsonTree
                value={current.pendingWrites}
                label="writes of the tasks that ran from here"
                defaultOpen={false}
              />
            )}
          </Section>
        </>
      )}
      <div className="border-t border-slate-200 pt-4">
        {hasRole(user?.role, "supervisor") ? (
          <ForkPanel
            key={summary.checkpointId}
            threadId={threadId}
            checkpointId={summary.checkpointId}
            version={version}
            nodes={nodes}
            channels={channels}
            schema={forkSchema}
            current={current?.values}
            onForked={onForked}
          />
        ) : (
          <p className="text-sm text-slate-700" data-testid="fork-needs-supervisor">
            Forking (time travel) needs the supervisor role.
          </p>
        )}
      </div>
    </article>
  );
}

/** The headline of an interrupt payload, when it has one (any agent's contract names it `title`). */
function titleOf(payload: unknown): string | null {
  const title = (payload as { title?: unknown } | null)?.title;
  return typeof title === "string" ? title : null;
}
