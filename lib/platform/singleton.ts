import "server-only";

/*
 * The one owner of process-wide objects (the pool, the logger, timers, in-process maps). A module-level variable is
 * not process-wide under Next.js: `instrumentation.ts` is bundled apart from the routes, route bundles may carry their
 * own copy of a module, and dev hot reload evaluates modules again — each copy would open its own pool or start its
 * own timer. So every such object lives on `globalThis` under `Symbol.for("hitl-console.<name>")`, which every copy
 * of every bundle in the process resolves to the same key. Nothing else in lib/ touches `globalThis` for this.
 */

type Slots = Record<symbol, unknown>;

function slotKey(name: string): symbol {
  return Symbol.for(`hitl-console.${name}`);
}

/**
 * This process's `name` object, made by `create` on first use and shared from then on by every bundle and every
 * re-evaluation of the calling module. `create` runs once per process (again only after {@link clearSingleton}); if it
 * throws, nothing is kept and the next call tries again. It must not return null or undefined (that reads as absent).
 */
export function singleton<T>(name: string, create: () => T): T {
  const slots = globalThis as Slots;
  const key = slotKey(name);
  slots[key] ??= create();
  return slots[key] as T;
}

/**
 * The `name` object if this process has one, without making it: for code that must tell "not started" apart (a stop
 * or flush before any start, a tick run by hand).
 */
export function peekSingleton<T>(name: string): T | undefined {
  return (globalThis as Slots)[slotKey(name)] as T | undefined;
}

/**
 * Put `value` as the process's `name` object (replacing any): for objects made only once an `await` has passed
 * (a start that reads the database first), or a setting replaced at run time (a listener, a test's logger).
 */
export function setSingleton<T>(name: string, value: T): T {
  (globalThis as Slots)[slotKey(name)] = value;
  return value;
}

/** Forget the process's `name` object (a failed open to be retried, a stopped timer): the next use makes a new one. */
export function clearSingleton(name: string): void {
  delete (globalThis as Slots)[slotKey(name)];
}
