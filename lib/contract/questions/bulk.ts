import { questionKind } from "./kinds";

/*
 * Which interrupt actions can be decided in bulk (isomorphic: the inbox offers bulk decisions only for these; the
 * server builds the answers in lib/queue/bulk-answers.ts). Read from the question kinds: actions that need a choice or
 * a text of their own are decided one by one.
 */

/** Whether items of this action can be approved / rejected in bulk. */
export function isBulkAction(action: string): boolean {
  return questionKind(action)?.bulk != null;
}
