import { clearSingleton, peekSingleton, setSingleton, singleton } from "./singleton";

// Names of this file only, cleared after each test: the slots are process-wide, as they should be.
const names: string[] = [];
function fresh(label: string): string {
  const name = `test-singleton.${label}.${names.length}.${Math.random().toString(36).slice(2)}`;
  names.push(name);
  return name;
}

afterEach(() => {
  for (const name of names.splice(0)) clearSingleton(name);
});

describe("singleton", () => {
  it("makes the object once and hands back the same instance", () => {
    const name = fresh("same");
    const create = vi.fn(() => ({ made: Date.now() }));
    const first = singleton(name, create);
    const second = singleton(name, create);
    expect(second).toBe(first);
    expect(create).toHaveBeenCalledTimes(1);
  });

  it("keeps distinct names distinct", () => {
    const a = singleton(fresh("a"), () => new Map<string, number>());
    const b = singleton(fresh("b"), () => new Map<string, number>());
    expect(a).not.toBe(b);
  });

  it("lives on globalThis under Symbol.for('hitl-console.<name>')", () => {
    const name = fresh("key");
    const value = singleton(name, () => ({}));
    expect((globalThis as Record<symbol, unknown>)[Symbol.for(`hitl-console.${name}`)]).toBe(value);
  });

  it("is shared by a second, separately evaluated copy of the module (another bundle, a hot reload)", async () => {
    const name = fresh("copies");
    const first = await import("./singleton");
    const made = first.singleton(name, () => ({ copy: "first" }));
    vi.resetModules();
    const second = await import("./singleton");
    // A new evaluation of the module: a module-level cache in it would start empty here.
    expect(second).not.toBe(first);
    const create = vi.fn(() => ({ copy: "second" }));
    expect(second.singleton(name, create)).toBe(made);
    expect(create).not.toHaveBeenCalled();
  });

  it("keeps nothing when the factory throws: the next call makes it", () => {
    const name = fresh("throws");
    expect(() =>
      singleton(name, () => {
        throw new Error("not yet");
      }),
    ).toThrow("not yet");
    expect(peekSingleton(name)).toBeUndefined();
    expect(singleton(name, () => "made")).toBe("made");
  });
});

describe("peekSingleton, setSingleton, clearSingleton", () => {
  it("peeks without making", () => {
    const name = fresh("peek");
    expect(peekSingleton(name)).toBeUndefined();
    const value = singleton(name, () => ({}));
    expect(peekSingleton(name)).toBe(value);
  });

  it("sets a value that singleton then returns, and replaces it", () => {
    const name = fresh("set");
    const set = setSingleton(name, { n: 1 });
    expect(singleton(name, () => ({ n: 2 }))).toBe(set);
    const replaced = setSingleton(name, { n: 3 });
    expect(peekSingleton(name)).toBe(replaced);
  });

  it("keeps a stored false (only absence makes a new one)", () => {
    const name = fresh("false");
    setSingleton(name, false);
    expect(singleton(name, () => true)).toBe(false);
  });

  it("clears, so the next use makes a new one", () => {
    const name = fresh("clear");
    const first = singleton(name, () => ({}));
    clearSingleton(name);
    expect(peekSingleton(name)).toBeUndefined();
    expect(singleton(name, () => ({}))).not.toBe(first);
  });
});
