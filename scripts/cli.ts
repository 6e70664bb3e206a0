/** Argument helpers for the npm scripts' commands. */

/** Print `message` and the usage, and exit with 2 (a usage error). */
export function usageExit(command: string, usage: string, message: string): never {
  console.error(`${command}: ${message}\n${usage}`);
  process.exit(2);
}

/** The value after `--name`, or undefined when the option is absent; `fail` when it has no value. */
export function readOption(
  args: string[],
  name: string,
  fail: (message: string) => never,
): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith("--")) fail(`${name} needs a value`);
  return value;
}
