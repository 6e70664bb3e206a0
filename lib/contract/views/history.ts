/*
 * The history viewer's page of a thread's checkpoint tree (`GET /api/threads/{threadId}/history`), and what a fork
 * from one of its checkpoints would reach again, as the browser reads them. Types only: the server builds them in
 * lib/runtime/views/history-view.ts and lib/runtime/runs/side-effects.ts.
 */

/** What produced a checkpoint. */
export type WrittenBy =
  /** Tasks that ran from the parent checkpoint (`source` "loop"): their node names. */
  | { kind: "nodes"; nodes: string[] }
  /** The caller's input starting a run (`source` "input"). */
  | { kind: "input" }
  /** `updateState` (an operator's edit, or the first step of a time-travel fork). */
  | { kind: "update" }
  /** A copy of another checkpoint (`updateState(config, null, "__copy__")`). */
  | { kind: "fork" }
  /** A paused thread moved onto a newer version of its agent by a declared migration (`source` "migration"). */
  | { kind: "migration" };

/** One checkpoint of the tree. */
export interface HistoryCheckpoint {
  checkpointId: string;
  parentCheckpointId: string | null;
  /** LangGraph's step: counts along one chain, so a fork's branch repeats the numbers of the line it left. */
  step: number | null;
  /**
   * Its place in the thread's whole history, oldest first from 1, unique across branches: the step number the
   * console shows (a fork's checkpoints never share a number with the line it left).
   */
  number: number;
  /** LangGraph's `metadata.source`: input | loop | update | fork. */
  source: string | null;
  /** ISO 8601. */
  createdAt: string;
  writtenBy: WrittenBy;
  /**
   * `"main"` for the head's chain of ancestors, `"branch-N"` for the others (see `labelBranches` in
   * lib/runtime/views/history-view.ts).
   */
  branch: string;
  /** The thread's newest checkpoint: where a new run continues. */
  isHead: boolean;
  /** A task raised interrupts here that are still unanswered and nothing moved past it. */
  pausedForHuman: boolean;
  /** Tasks that raised interrupts here (answered or not). */
  interruptCount: number;
  /** More than one: branches start here. */
  childCount: number;
  /** Retention pruned the steps before it: the history starts here ("earlier steps pruned"). */
  truncated: boolean;
  /** Its run was rolled back by newer input (double texting): the thread went on from before it. */
  abandoned: boolean;
}

/** One chain of the tree, for a legend. */
export interface BranchSummary {
  label: string;
  /** Its newest checkpoint (the thread's head for `main`). */
  leafCheckpointId: string;
  /** The checkpoint it branched off (on another chain); null for `main` and for a chain that starts at a root. */
  forkedFromCheckpointId: string | null;
  /** Checkpoints that carry this label. */
  size: number;
}

/** `GET /api/threads/{threadId}/history`. */
export interface ThreadHistoryView {
  threadId: string;
  /** The thread's status now (it changes when a fork's run starts, pauses or ends). */
  status: string;
  /** Null when the thread has no checkpoint yet. */
  headCheckpointId: string | null;
  /** Every chain of the tree (not only those on this page), `main` first. */
  branches: BranchSummary[];
  /** This page, newest first. */
  checkpoints: HistoryCheckpoint[];
  /** Pass as `before` for the next, older page; null on the last page. */
  nextCursor: string | null;
}

/** A recorded side effect that a branch from some checkpoint would reach again. */
export interface SideEffectWarning {
  code: `side_effect:${string}`;
  message: string;
  /** The ledger row that prevents doing it twice. */
  recordId: string;
}
