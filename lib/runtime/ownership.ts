/** Thrown when another process took a run over (its lease expired): this one must stop and write nothing more. */
export class LostOwnershipError extends Error {
  override name = "LostOwnershipError";
}
