const COUNTER_WIDTH = 16;

/**
 * The next channel version after `current`: a 16-digit zero-padded counter, a dot, and 12 random hex digits.
 *
 * The counter keeps versions increasing (LangGraph compares them, and padded digits order the same way as text and
 * as numbers); the random part makes every call unique. That uniqueness is what keeps forks apart: two branches
 * forked from one checkpoint both step their channels from the same counter, and with plain integers (the official
 * JS saver) their blobs land on the same (channel, version) key, so one branch silently reads the other's value.
 * Accepts integer versions written by other savers.
 */
export function nextChannelVersion(current: string | number | undefined): string {
  let counter = 0;
  if (typeof current === "number") counter = current;
  else if (typeof current === "string") {
    const head = Number.parseInt(current.split(".", 1)[0] ?? "", 10);
    if (!Number.isFinite(head)) throw new Error(`Unrecognised channel version ${JSON.stringify(current)}`);
    counter = head;
  }
  // 48 random bits (uniqueness, not secrecy: Math.random is ample and far cheaper than crypto on this hot path);
  // two forks stepping the same counter collide once in ~10^14 pairs.
  const random = Math.floor(Math.random() * 2 ** 48)
    .toString(16)
    .padStart(12, "0");
  return `${String(counter + 1).padStart(COUNTER_WIDTH, "0")}.${random}`;
}
