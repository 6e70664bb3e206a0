import fc from "fast-check";
import { withMigratedDatabase } from "@/e2e/support/migrated-database";
import { RUN_KINDS } from "@/lib/contract/wire";
import { type InvolvedPrincipal, listInvolvedPrincipals, listInvolvedPrincipalsOf } from "./involved";

/*
 * Four-eyes reads who was involved in what a thread asks now. Generated thread histories (runs of every kind, edited or
 * not, decisions of every status, free-text answers, approvals, equal timestamps) are written to Postgres and read
 * back; the result must be what the rule says, computed here from the same history in plain code.
 */

const USERS = ["u1", "u2", "u3", "u4"];
const BASE = Date.parse("2026-01-01T00:00:00Z");
const at = (seconds: number) => new Date(BASE + seconds * 1000);

interface RunRow {
  kind: (typeof RUN_KINDS)[number];
  startedBy: string | null;
  edited: boolean;
  t: number;
}
interface DecisionRow {
  action: "refund_approval" | "input_text" | "confirm_email";
  status: "pending" | "answered" | "resolved" | "superseded";
  resolvedById: string | null;
  resolvedAt: number | null;
}
interface History {
  createdBy: string | null;
  startedBy: string | null;
  lastEditedBy: string | null;
  runs: RunRow[];
  decisions: DecisionRow[];
}

const user = fc.option(fc.constantFrom(...USERS), { nil: null });
const history: fc.Arbitrary<History> = fc.record({
  createdBy: user,
  startedBy: user,
  lastEditedBy: fc.option(fc.constantFrom(...USERS), { nil: null, freq: 4 }),
  runs: fc.array(
    fc.record({
      kind: fc.constantFrom(...RUN_KINDS),
      startedBy: user,
      edited: fc.boolean(),
      t: fc.integer({ min: 0, max: 4 }),
    }),
    { maxLength: 6 },
  ),
  decisions: fc.array(
    fc.record({
      action: fc.constantFrom("refund_approval" as const, "input_text" as const, "confirm_email" as const),
      status: fc.constantFrom(
        "pending" as const,
        "answered" as const,
        "resolved" as const,
        "superseded" as const,
      ),
      resolvedById: user,
      resolvedAt: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
    }),
    { maxLength: 6 },
  ),
});

/** The rule, from the history alone: principal → how they were involved (the first role that names them wins). */
function expected(h: History): Record<string, InvolvedPrincipal["kind"]> {
  const resolvedTimes = (action?: string) =>
    h.decisions
      .filter((d) => d.status === "resolved" && d.resolvedAt !== null && (!action || d.action === action))
      .map((d) => d.resolvedAt as number);
  const previous = resolvedTimes().length > 0 ? Math.max(...resolvedTimes()) : null;
  const approvals = resolvedTimes("refund_approval");
  const lastApproval = approvals.length > 0 ? Math.max(...approvals) : null;
  const starters = h.runs.filter(
    (r) =>
      r.startedBy !== null && (r.edited || (r.kind !== "resume" && (previous === null || r.t > previous))),
  );
  const answerers = h.decisions.filter(
    (d) =>
      d.action === "input_text" &&
      d.status === "resolved" &&
      d.resolvedById !== null &&
      (lastApproval === null || (d.resolvedAt !== null && d.resolvedAt > lastApproval)),
  );
  const out: Record<string, InvolvedPrincipal["kind"]> = {};
  const add = (id: string | null, kind: InvolvedPrincipal["kind"]) => {
    if (id && !(id in out)) out[id] = kind;
  };
  add(h.lastEditedBy, "editor");
  for (const r of starters) if (r.edited) add(r.startedBy, "editor");
  add(h.createdBy, "filer");
  for (const r of starters) if (!r.edited) add(r.startedBy, "starter");
  for (const d of answerers) add(d.resolvedById, "answerer");
  if (previous === null) add(h.startedBy, "starter");
  return out;
}

const ctx = withMigratedDatabase("involved");

async function write(h: History): Promise<string> {
  const threadId = crypto.randomUUID();
  const q = (text: string, values: unknown[]) => ctx.database.pool!.query(text, values);
  await q(
    `INSERT INTO threads (id, title, customer_message, status, created_by, started_by, last_edited_by)
     VALUES ($1, 't', 'm', 'interrupted', $2, $3, $4)`,
    [threadId, h.createdBy, h.startedBy, h.lastEditedBy],
  );
  for (const r of h.runs) {
    await q(
      `INSERT INTO runs (id, thread_id, kind, status, started_by, edited_state, created_at)
       VALUES ($1, $2, $3, 'succeeded', $4, $5, $6)`,
      [crypto.randomUUID(), threadId, r.kind, r.startedBy, r.edited, at(r.t)],
    );
  }
  for (const d of h.decisions) {
    await q(
      `INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload, status, resolved_by_id,
         resolved_at)
       VALUES ($1, $2, $3, '1f0', $4, '{}', $5, $6, $7)`,
      [
        crypto.randomUUID(),
        threadId,
        crypto.randomUUID(),
        d.action,
        d.status,
        d.resolvedById,
        d.resolvedAt === null ? null : at(d.resolvedAt),
      ],
    );
  }
  return threadId;
}

describe("listInvolvedPrincipals", () => {
  it("names whom the four-eyes rule names, for generated histories", async () => {
    await fc.assert(
      fc.asyncProperty(history, async (h) => {
        const threadId = await write(h);
        const involved = await listInvolvedPrincipals({
          db: ctx.database.db,
          thread: {
            id: threadId,
            createdBy: h.createdBy,
            startedBy: h.startedBy,
            lastEditedBy: h.lastEditedBy,
          },
        });
        const got = Object.fromEntries(involved.map((p) => [p.id, p.kind]));
        expect(involved.length).toBe(Object.keys(got).length); // each principal once
        expect(got).toEqual(expected(h));
      }),
      {
        numRuns: 300,
        seed: 20_261_202,
        // A run started in the same instant as the previous decision is not "since" it.
        examples: [
          [
            {
              createdBy: null,
              startedBy: null,
              lastEditedBy: null,
              runs: [{ kind: "input", startedBy: "u2", edited: false, t: 5 }],
              decisions: [{ action: "confirm_email", status: "resolved", resolvedById: "u1", resolvedAt: 5 }],
            },
          ],
          // A free-text answer taken in the same instant as the approval is not "since" it.
          [
            {
              createdBy: null,
              startedBy: null,
              lastEditedBy: null,
              runs: [],
              decisions: [
                { action: "refund_approval", status: "resolved", resolvedById: "u1", resolvedAt: 3 },
                { action: "input_text", status: "resolved", resolvedById: "u3", resolvedAt: 3 },
              ],
            },
          ],
        ],
      },
    );
  });

  it("names the same for many threads read together (an inbox page) as for each thread alone", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(history, { minLength: 1, maxLength: 12 }), async (histories) => {
        const threads = [];
        for (const h of histories) {
          const id = await write(h);
          threads.push({ id, createdBy: h.createdBy, startedBy: h.startedBy, lastEditedBy: h.lastEditedBy });
        }
        // An unknown thread reads as no one involved but its own fields.
        const unknown = { id: crypto.randomUUID(), createdBy: "u1", startedBy: null, lastEditedBy: null };
        const together = await listInvolvedPrincipalsOf({
          db: ctx.database.db,
          threads: [...threads, unknown],
        });
        for (const [i, thread] of threads.entries()) {
          const got = together.get(thread.id)!;
          expect(Object.fromEntries(got.map((p) => [p.id, p.kind]))).toEqual(expected(histories[i]!));
          expect(got).toEqual(await listInvolvedPrincipals({ db: ctx.database.db, thread }));
        }
        expect(together.get(unknown.id)).toEqual([{ id: "u1", kind: "filer", why: "filed this ticket" }]);
      }),
      { numRuns: 30, seed: 20_261_203 },
    );
  });
});
