import type { Message } from "@ag-ui/core";
import type { Delta } from "jsondiffpatch";

/*
 * One checkpoint as the history page and the thread page read it (`GET /api/threads/{threadId}/checkpoints/{id}`):
 * its state, writes, interrupts and the diff from its parent. Types only: the server builds it in
 * lib/runtime/views/checkpoint-view.ts.
 */

/** A write stored against the checkpoint by a task that ran from it (or by the caller: resume values, input). */
export interface CheckpointWriteView {
  taskId: string;
  /** The node of the task, when the task is one of this checkpoint's; null for the caller's writes. */
  node: string | null;
  channel: string;
  /** JSON-safe; LangChain messages in AG-UI form. */
  value: unknown;
}

/** An interrupt raised from the checkpoint. */
export interface CheckpointInterruptView {
  interruptId: string;
  node: string;
  /** The payload's action, or "unknown" when it does not fit the contract. */
  action: string;
  payload: unknown;
  /** The raw value (JSON-safe), only when it does not fit the contract (render the fallback view). */
  raw?: unknown;
  invalid?: string;
  /** The task that raised it finished from this checkpoint (it accepted an answer). */
  answered: boolean;
}

/** Top-level state keys a delta touches. */
export interface ChangedKeys {
  added: string[];
  changed: string[];
  removed: string[];
}

/** `GET /api/threads/{threadId}/checkpoints/{checkpointId}`. */
export interface CheckpointView {
  threadId: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  createdAt: string | null;
  metadata: { step: number | null; source: string | null; parents: Record<string, string> };
  /** JSON-safe state values without `messages`. */
  values: Record<string, unknown>;
  messages: Message[];
  /** Nodes scheduled to run from here. Whether a human is awaited comes from `interrupts`, not from this. */
  next: string[];
  pendingWrites: CheckpointWriteView[];
  interrupts: CheckpointInterruptView[];
  /** Null for a checkpoint without a (readable) parent. */
  diff: {
    against: string;
    /** jsondiffpatch delta from the parent's to this checkpoint's JSON state (messages included); null: no change. */
    delta: Delta | null;
    changedKeys: ChangedKeys;
  } | null;
}
