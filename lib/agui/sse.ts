import type { BaseEvent } from "@ag-ui/core";
import { EventEncoder } from "@ag-ui/encoder";

/**
 * The event with its per-thread sequence number in `metadata.seq` (other metadata kept). The `ag-ui` metadata key
 * is reserved for the protocol, so the number lives under a key of its own.
 */
export function withSeq<E extends BaseEvent>(event: E, seq: number): E {
  if (!Number.isSafeInteger(seq) || seq < 0)
    throw new Error(`agui: seq must be a non-negative integer, got ${seq}`);
  return { ...event, metadata: { ...event.metadata, seq } };
}

/**
 * One SSE frame: `id: <seq>` (so a reconnecting page can ask for what came after) followed by the event, stamped
 * with {@link withSeq}, as `@ag-ui/encoder` writes it. The encoder is built without an Accept header on purpose: a
 * browser's wildcard Accept would make it prefer protobuf.
 */
export function encodeSse(event: BaseEvent, seq: number): string {
  return `id: ${seq}\n${new EventEncoder().encodeSSE(withSeq(event, seq))}`;
}
