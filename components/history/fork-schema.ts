/*
 * The fork form, generated from the agent's editable state (its zod schema as JSON Schema, `z.toJSONSchema` on the
 * server): one field per property with its type, bounds and choices, and the checks the server makes, in words, so a
 * wrong value is found while typing instead of on submit. Isomorphic and pure.
 */

type Json = Record<string, unknown>;

/** One editable field. */
export interface ForkField {
  name: string;
  kind: "text" | "integer" | "number" | "choice" | "boolean";
  /** Null is a valid value (an empty field means null). */
  nullable: boolean;
  choices: string[];
  min?: number;
  /** The minimum itself is not allowed (JSON Schema `exclusiveMinimum`). */
  minExclusive?: boolean;
  max?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** The schema's words for it (zod `.meta({ title, description })`), when it has them. */
  title?: string;
  description?: string;
  /** How a form shows it, when the schema says (`.meta({ widget })`: `textarea`, `order`). */
  widget?: string;
  /** The schema's default, as a form types it. */
  defaultValue?: string;
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The fields of an object schema, in its order. Properties of a kind the form cannot edit are left to the JSON box. */
export function forkFields(schema: unknown): ForkField[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const fields: ForkField[] = [];
  for (const [name, raw] of Object.entries(schema.properties)) {
    if (!isObject(raw)) continue;
    const options = Array.isArray(raw.anyOf) ? raw.anyOf.filter(isObject) : [raw];
    const nullable = options.some((o) => o.type === "null");
    const main = options.find((o) => o.type !== "null");
    if (!main) continue;
    const num = (k: string) => (typeof main[k] === "number" ? (main[k] as number) : undefined);
    const word = (k: string) => {
      const v = raw[k] ?? main[k];
      return typeof v === "string" ? v : undefined;
    };
    const fallback = raw.default ?? main.default;
    const words = {
      ...(word("title") ? { title: word("title") } : {}),
      ...(word("description") ? { description: word("description") } : {}),
      ...(word("widget") ? { widget: word("widget") } : {}),
      ...(fallback !== undefined && fallback !== null ? { defaultValue: showField(fallback) } : {}),
    };
    if (Array.isArray(main.enum) && main.enum.every((e) => typeof e === "string")) {
      fields.push({ name, kind: "choice", nullable, choices: main.enum as string[], ...words });
    } else if (main.type === "string") {
      fields.push({
        name,
        kind: "text",
        nullable,
        choices: [],
        minLength: num("minLength"),
        maxLength: num("maxLength"),
        pattern: typeof main.pattern === "string" ? main.pattern : undefined,
        ...words,
      });
    } else if (main.type === "integer" || main.type === "number") {
      const exclusive = num("exclusiveMinimum");
      fields.push({
        name,
        kind: main.type,
        nullable,
        choices: [],
        min: exclusive ?? num("minimum"),
        minExclusive: exclusive !== undefined,
        max: num("maximum"),
        ...words,
      });
    } else if (main.type === "boolean") {
      fields.push({ name, kind: "boolean", nullable, choices: [], ...words });
    }
  }
  return fields;
}

/**
 * A field's value as typed, read into the value the fork would send, or why it cannot be one of its kind (words in a
 * number field). Its bounds and every other rule are the server's to say, in the agent's words: the fork form asks
 * `…/fork/check` as it is typed.
 */
export function readField(
  field: ForkField,
  raw: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const text = raw.trim();
  if (text === "") {
    if (field.nullable) return { ok: true, value: null };
    if (field.kind === "text") return { ok: true, value: "" };
    return { ok: false, error: "must not be empty" };
  }
  if (field.kind === "boolean") return { ok: true, value: text === "true" };
  if (field.kind === "choice") {
    return field.choices.includes(text)
      ? { ok: true, value: text }
      : { ok: false, error: `must be one of ${field.choices.join(", ")}` };
  }
  if (field.widget === "money" && field.kind === "integer") {
    // An amount in minor units is typed as money ("12.50"): at most two decimals, read into cents exactly.
    const m = /^(-?)(\d+)(?:[.,](\d{1,2}))?$/.exec(text);
    if (!m) return { ok: false, error: "must be an amount such as 12.50" };
    const cents = Number(m[2]) * 100 + Number((m[3] ?? "").padEnd(2, "0"));
    if (!Number.isSafeInteger(cents)) return { ok: false, error: "must be an amount such as 12.50" };
    return { ok: true, value: m[1] === "-" ? -cents : cents };
  }
  if (field.kind === "integer" || field.kind === "number") {
    if (!/^-?\d+(\.\d+)?$/.test(text)) return { ok: false, error: "must be a number" };
    const value = Number(text);
    if (field.kind === "integer" && !Number.isInteger(value))
      return { ok: false, error: "must be a whole number" };
    return { ok: true, value };
  }
  return { ok: true, value: text };
}

/** A value already in the state, as the field shows it (null and absent as empty; an amount in cents as money). */
export function showField(value: unknown, field?: ForkField): string {
  if (value === null || value === undefined) return "";
  if (field?.widget === "money" && typeof value === "number" && Number.isInteger(value)) {
    const sign = value < 0 ? "-" : "";
    const abs = Math.abs(value);
    return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}
