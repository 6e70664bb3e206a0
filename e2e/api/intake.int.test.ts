import fc from "fast-check";
import { listAgents } from "@/lib/runtime/agents/registry";
import { intakeJsonSchema } from "@/lib/runtime/runs/intake";
import { authedFetch } from "../support/auth";
import { type Backend, serverOn } from "./setup";

/*
 * A ticket is its agent's (issue 30, "Input is the agent's"). Generated over the registry: for every registered agent,
 * tickets built from its own intake schema — valid fields, hostile values, missing and unknown fields — are posted to
 * `POST /api/threads` on a real server, on both databases. What the server does is compared with the agent's schema
 * read in this process: accepted exactly when the schema accepts, the thread then holding the fields as the schema
 * read them (and the order the agent names); refused otherwise with 400 `bad_request:thread` naming the field, and
 * nothing written (the newest thread and the newest audit entry are the same as before).
 */

type Json = Record<string, unknown>;
const RUNS = Number(process.env.INTAKE_RUNS ?? 50);

/** Values for one property of an agent's ticket: mostly of its kind and near its rules, sometimes anything. */
function valueFor(property: Json): fc.Arbitrary<unknown> {
  const hostile = fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 1 }),
  );
  let near: fc.Arbitrary<unknown>;
  if (Array.isArray(property.enum)) {
    near = fc.constantFrom(...(property.enum as unknown[]), "LOUD", "");
  } else if (property.widget === "order") {
    near = fc.constantFrom("ORD-1002", "ord-1003", " ORD-1001 ", "ORD-12", "ORDER-1002", "");
  } else if (property.type === "string") {
    near = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom("   ", "a".repeat(5000), ` ${"b".repeat(5000)} `, "c".repeat(5001)),
    );
  } else if (property.type === "integer" || property.type === "number") {
    near = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
  } else if (property.type === "boolean") {
    near = fc.boolean();
  } else {
    near = fc.anything();
  }
  return fc.oneof({ weight: 4, arbitrary: near }, { weight: 1, arbitrary: hostile });
}

/** A ticket for an agent: each of its fields given or left out, sometimes with a field it does not have. */
function ticketFor(schema: Json): fc.Arbitrary<Json> {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const fields = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [
      name,
      name === "message"
        ? fc.option(valueFor(property), { nil: undefined, freq: 8 })
        : fc.option(valueFor(property), { nil: undefined, freq: 3 }),
    ]),
  );
  // A field the agent does not have, one ticket in six (`fc.option`'s freq is the chance of leaving it out).
  const unknown = fc.oneof(
    { weight: 5, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.record({ [`extra_${Object.keys(properties).length}`]: fc.string({ maxLength: 5 }) }),
    },
  );
  return fc.tuple(fc.record(fields), unknown).map(([given, extra]) => {
    const ticket: Json = {};
    for (const [k, v] of Object.entries(given)) if (v !== undefined) ticket[k] = v;
    return { ...ticket, ...(extra ?? {}) };
  });
}

describe.each<Backend>(["postgres", "pglite"])("tickets are the agent's own on %s", (backend) => {
  let base = "";
  let stop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ base, stop } = await serverOn(backend, "intake", {}));
  }, 120_000);
  afterAll(() => stop());

  const get = async (path: string) => (await authedFetch(`${base}${path}`, {}, "supervisor")).json();
  /** The newest thread and the newest audit entry: a refused ticket must change neither. */
  const newest = async () => ({
    thread: ((await get("/api/threads?status=all&limit=1")) as { items: { threadId: string }[] }).items[0]
      ?.threadId,
    audit: ((await get("/api/audit?limit=1")) as { items: { id: string }[] }).items[0]?.id,
  });

  it.each(listAgents().map((agent) => [agent.id, agent] as const))(
    "%s: the server reads a ticket exactly as the agent's schema does",
    async (id, agent) => {
      const schema = intakeJsonSchema(agent);
      let accepted = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(ticketFor(schema), async (ticket) => {
          const before = await newest();
          const res = await authedFetch(
            `${base}/api/threads`,
            {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ agent: id, ...ticket }),
            },
            "operator",
          );
          const body = (await res.json()) as Json;
          const expected = agent.intake.schema.safeParse(ticket);
          if (expected.success) {
            expect(res.status, JSON.stringify(body)).toBe(201);
            accepted += 1;
            const view = (await get(`/api/threads/${body.threadId as string}`)) as Json;
            expect(view.agentId).toBe(id);
            expect(view.ticket).toEqual(expected.data);
            expect(view.customerMessage).toBe(expected.data.message);
            expect(view.orderRef).toBe(agent.intake.order?.(expected.data) ?? null);
          } else {
            expect(res.status, JSON.stringify(body)).toBe(400);
            expect(body.code).toBe("bad_request:thread");
            // The field the schema refuses first is named (a field the agent does not have, by its own name).
            const first = expected.error.issues[0];
            const named = first?.code === "unrecognized_keys" ? first.keys[0] : first?.path[0];
            expect(JSON.stringify(body)).toContain(String(named));
            refused += 1;
            expect(await newest()).toEqual(before);
          }
        }),
        { numRuns: RUNS },
      );
      // The generator reaches both sides of the schema for every agent.
      expect(accepted, `${id}: no generated ticket was accepted`).toBeGreaterThan(0);
      expect(refused, `${id}: no generated ticket was refused`).toBeGreaterThan(0);
    },
    120_000,
  );
});
