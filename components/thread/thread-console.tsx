"use client";

import { useUser } from "@/components/auth/user-context";
import { useHydrated } from "@/components/ui/use-hydrated";
import type { QueueNeighbour } from "@/lib/contract/inbox";
import { hasRole } from "@/lib/contract/roles";
import type { ClaimView } from "@/lib/contract/views/claims";
import type { StreamEvent } from "./apply-event";
import { AttentionPanel } from "./attention-panel";
import { ConnectionBanner } from "./connection-banner";
import { Conversation } from "./conversation";
import { DecisionLedger } from "./decision-ledger";
import { DecisionPanel } from "./decision-panel";
import { EffectsPanel } from "./effects-panel";
import { OutcomeCard } from "./outcome-card";
import { ReceiptsPanel } from "./receipts-panel";
import { ThreadHeader } from "./thread-header";
import type { ThreadViewJson } from "./thread-state";
import { TwoAnswers } from "./two-answers";
import { useLiveEffects } from "./use-live-effects";
import { useMayDecide } from "./use-may-decide";
import { useThread } from "./use-thread";
import { useThreadClaims } from "./use-thread-claims";

/**
 * The thread page's client root. It starts from the server render and stays attached: its own runs stream in
 * through HttpAgent, anything else through the event log. `data-ready` turns true once hydrated (clicks before that
 * would be lost); `data-last-seq` and `data-applied-seqs` show which events the page applied, for tests.
 */
export function ThreadConsole({
  view,
  runEvents,
  claims: initialClaims = [],
  queue = { previous: null, next: null },
}: {
  view: ThreadViewJson;
  runEvents: StreamEvent[];
  /** Live claims of the pending decisions when the page was rendered. */
  claims?: ClaimView[];
  /** The threads before and after this one in the queue (`p` / `n`). */
  queue?: { previous: QueueNeighbour | null; next: QueueNeighbour | null; search?: string };
}) {
  const { state, send, decide, dismissError, nudge } = useThread(view, runEvents);
  const user = useUser();
  const hydrated = useHydrated();
  const effects = useLiveEffects(state.threadId, view.effects ?? [], state.lastSeq, state.status);
  const pendingKey = state.pending.map((p) => p.interruptId).join(",");
  const refusals = useMayDecide(state.threadId, pendingKey, view.mayDecide ?? []);
  // Claims matter to those who may answer: a viewer's page follows only the changes that name the thread.
  const claims = useThreadClaims(
    state.threadId,
    pendingKey,
    initialClaims,
    nudge,
    hasRole(user?.role, "operator"),
  );
  const order = state.values.order as { currency?: unknown } | null | undefined;
  const currency = typeof order?.currency === "string" ? order.currency : undefined;
  return (
    <div
      className="space-y-6"
      data-testid="thread-page"
      data-ready={hydrated ? "true" : "false"}
      data-status={state.status}
      data-connection={state.connection}
      data-last-seq={state.lastSeq}
      data-applied-seqs={state.applied.join(",")}
      data-dropped-seqs={state.dropped}
      data-claims-live={claims.live ? "true" : "false"}
    >
      <ThreadHeader
        threadId={state.threadId}
        title={state.title}
        status={state.status}
        step={state.steps.at(-1)}
        signedInAs={user ? `${user.email} (${user.role})` : null}
        canDecide={hasRole(user?.role, "operator")}
        queue={queue}
        filedWith={view.ticketLines}
      />
      <ConnectionBanner state={state} onDismiss={dismissError} />
      <div className="grid items-start gap-6 lg:grid-cols-12">
        <div className="space-y-6 lg:col-span-7">
          {state.erased && (
            <section
              data-testid="thread-erased"
              className="rounded-md bg-slate-100 p-3 text-sm text-slate-800"
            >
              <h2 className="font-medium">This customer's personal data was erased</h2>
              <p className="mt-1">
                What the agent held for this thread (its messages and working state) was erased with it and
                cannot be read any more. The ledger — decisions, refunds and who did what — stays.
              </p>
            </section>
          )}
          {state.status === "needs_attention" && <AttentionPanel view={view} />}
          <DecisionPanel
            state={state}
            actor={user?.email ?? ""}
            send={send}
            decide={decide}
            refusals={refusals}
            claims={claims.claims}
            onClaimChange={claims.refresh}
          />
          {state.answeringDifferently && (
            <TwoAnswers
              threadId={state.threadId}
              answering={state.answeringDifferently}
              values={state.values}
              messages={state.messages}
              decisions={state.decisions}
              effects={effects.effects}
              currency={currency}
            />
          )}
          {/* While a run is moving the state, its outcome is not written yet: the card would set an interim state
              against the live ledger (Side effects below shows the ledger as it moves). */}
          {state.status !== "running" && (
            <OutcomeCard
              values={state.values}
              effects={effects.effects}
              conversation={state.messages}
              forked={state.forked}
            />
          )}
          <EffectsPanel
            threadId={state.threadId}
            effects={effects.effects}
            canAct={hasRole(user?.role, "operator")}
            onActed={effects.replace}
          />
          <DecisionLedger
            decisions={state.decisions}
            currency={currency}
            threadId={state.threadId}
            canBranch={hasRole(user?.role, "supervisor") && state.status !== "running"}
          />
          <ReceiptsPanel receipts={view.receipts ?? []} />
        </div>
        <div className="lg:col-span-5">
          <Conversation
            messages={state.messages}
            streamingIds={state.streamingIds}
            customerMessage={state.customerMessage}
            values={state.values}
            effects={effects.effects}
            queued={state.queuedInputs}
          />
        </div>
      </div>
    </div>
  );
}
