/**
 * Count the calls an object's methods receive, by kind: each named method is wrapped on the instance (the original
 * still runs). For tests of what a library tells a handler (LangChain's callbacks), where the count is the point.
 */
export function countHeard<K extends string>(
  target: object,
  methods: readonly (readonly [method: string, kind: K])[],
): Record<K, number> {
  const heard = Object.fromEntries(methods.map(([, kind]) => [kind, 0])) as Record<K, number>;
  const object = target as Record<string, (...args: unknown[]) => unknown>;
  for (const [method, kind] of methods) {
    const original = object[method]?.bind(target);
    object[method] = (...args: unknown[]) => {
      heard[kind] += 1;
      return original?.(...args);
    };
  }
  return heard;
}
