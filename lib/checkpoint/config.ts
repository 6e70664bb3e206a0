import type { RunnableConfig } from "@langchain/core/runnables";

/** The parts of a RunnableConfig a saver needs, checked. */
export interface CheckpointAddress {
  threadId: string | undefined;
  checkpointNs: string;
  checkpointId: string | undefined;
}

/** Thrown for a config the saver cannot act on; the message names the operation and the offending field. */
export class CheckpointConfigError extends Error {
  override name = "CheckpointConfigError";
}

function optionalString(op: string, field: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new CheckpointConfigError(
    `${op}: config.configurable.${field} must be a string, got ${Array.isArray(value) ? "array" : typeof value}`,
  );
}

/** Read thread, namespace and checkpoint id from a config, rejecting values of the wrong type. */
export function readAddress(op: string, config: RunnableConfig | undefined): CheckpointAddress {
  const configurable: unknown = config?.configurable;
  if (configurable !== undefined && (configurable === null || typeof configurable !== "object")) {
    throw new CheckpointConfigError(`${op}: config.configurable must be an object`);
  }
  const c = (configurable ?? {}) as Record<string, unknown>;
  return {
    threadId: optionalString(op, "thread_id", c.thread_id),
    checkpointNs: optionalString(op, "checkpoint_ns", c.checkpoint_ns) ?? "",
    checkpointId: optionalString(op, "checkpoint_id", c.checkpoint_id),
  };
}

/** Like {@link readAddress}, but a thread id is required. */
export function requireThread(
  op: string,
  config: RunnableConfig | undefined,
): CheckpointAddress & { threadId: string } {
  if (config?.configurable === undefined) {
    throw new CheckpointConfigError(
      `${op}: config.configurable is missing; pass { configurable: { thread_id } } so the checkpoint has a thread`,
    );
  }
  const address = readAddress(op, config);
  if (address.threadId === undefined) {
    throw new CheckpointConfigError(`${op}: config.configurable.thread_id is required`);
  }
  return { ...address, threadId: address.threadId };
}
