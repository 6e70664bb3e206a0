import { randomUUID } from "node:crypto";
import { inboxReplyAgent } from "@/e2e/guide/agents/inbox-reply/agent";
import { buildInboxReplyGraph, INBOX_REVIEW } from "@/e2e/guide/agents/inbox-reply/graph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { reviewToolCalls } from "@/lib/agents/kit/reviewed-tools";
import { orderSupportAgent } from "@/lib/agents/order-support/agent";
import { buildOrderSupportGraph, REVIEWED_TOOLS } from "@/lib/agents/order-support/graph";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { errorCodeOf } from "@/lib/contract/errors";
import type { Database } from "@/lib/db/open";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";
import { refuseChangedQuestions } from "@/lib/runtime/runs/asked-again";
import { seedDemoOrders } from "@/lib/shop/demo-orders";

/*
 * The runtime's resume check holds for agents that do not ask through askHuman: a LangChain `createAgent` reviewed by
 * its middleware and an agent-inbox graph raising a raw `interrupt()`. A thread pauses under the declared code; the
 * same version then changes in place (what a careless deploy does) and the answer to the recorded question is
 * refused before it reaches the graph — and the check itself writes nothing (the checkpoint tables are unchanged).
 */

type Variant = [name: string, agent: AgentDefinition];

/** order_support@1 built with its one reviewed tool under other review settings (`null`: not reviewed at all). */
function orderSupportReviewing(
  change: Partial<typeof REVIEWED_TOOLS.issue_store_credit> | null,
): AgentDefinition {
  const interruptOn: Record<string, typeof REVIEWED_TOOLS.issue_store_credit> = change
    ? { issue_store_credit: { ...REVIEWED_TOOLS.issue_store_credit, ...change } }
    : {};
  return withBuild(orderSupportAgent, (deps) =>
    buildOrderSupportGraph({ ...deps, middleware: [reviewToolCalls(interruptOn)] }),
  );
}

const orderSupportVariants: Variant[] = [
  ["allowed decisions changed", orderSupportReviewing({ allowedDecisions: ["approve", "reject"] })],
  ["the tool no longer reviewed", orderSupportReviewing(null)],
  ["the reviewer's wording changed", orderSupportReviewing({ description: "Credit this customer?" })],
];

const inboxVariants: Variant[] = [
  [
    "editing no longer allowed",
    withBuild(inboxReplyAgent, ({ checkpointer }) =>
      buildInboxReplyGraph({
        checkpointer,
        review: { ...INBOX_REVIEW, config: { ...INBOX_REVIEW.config, allow_edit: false } },
      }),
    ),
  ],
  [
    "the reviewer's wording changed",
    withBuild(inboxReplyAgent, ({ checkpointer }) =>
      buildInboxReplyGraph({ checkpointer, review: { ...INBOX_REVIEW, description: "Send this?" } }),
    ),
  ],
];

/** The same definition (same id and version) built with other code. */
function withBuild(agent: AgentDefinition, build: AgentDefinition["build"]): AgentDefinition {
  return { ...agent, build } as AgentDefinition;
}

async function checkpointRows(database: Database): Promise<string> {
  const rows = await database.sql.query<{ c: number; w: number; b: number }>(
    "SELECT (SELECT count(*)::int FROM checkpoints) AS c, (SELECT count(*)::int FROM checkpoint_writes) AS w, (SELECT count(*)::int FROM checkpoint_blobs) AS b",
  );
  return JSON.stringify(rows[0]);
}

describe.each<Backend>(["pglite", "postgres"])("the resume check for every agent kind on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;

  beforeAll(async () => {
    backend = await openBackend(kind);
    await seedDemoOrders({ db: backend.database.db });
  });
  afterAll(async () => {
    await backend?.close();
  });

  /** A thread of `agent` paused at its question, and the question as the ledger records it. */
  async function pause(agent: AgentDefinition, text: string, ticket: Record<string, unknown>) {
    const threadId = randomUUID();
    const graph = agent.build({
      checkpointer: new DrizzleCheckpointSaver(backend.database.checkpointSql),
      db: backend.database.db,
    });
    const config = { configurable: { thread_id: threadId } };
    for await (const _ of await graph.stream(
      agent.input({ messageId: randomUUID(), text, ticket }),
      config,
    )) {
      // to the question
    }
    const [raised] = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts ?? []);
    if (!raised?.id) throw new Error(`${agent.id}: the thread did not pause at a question`);
    const parsed = agent.interrupts.parse(raised.value);
    if (!parsed.ok) throw new Error(parsed.error);
    return {
      ledger: [
        {
          interruptId: raised.id,
          action: parsed.action,
          payload: raised.value,
          status: "resolved" as const,
          askedInBuild: null as string | null,
        },
      ],
      run: {
        threadId,
        input: {
          kind: "resume" as const,
          actor: "operator@example.com",
          resume: [{ interruptId: raised.id, status: "resolved" as const, payload: {} }],
        },
      },
    };
  }

  const cases: [string, AgentDefinition, Variant[], string, Record<string, unknown>][] = [
    [
      "createAgent (order support)",
      orderSupportAgent,
      orderSupportVariants,
      "My headphones arrived scratched",
      { message: "My headphones arrived scratched", orderRef: "ORD-1002" },
    ],
    [
      "agent-inbox (inbox reply)",
      inboxReplyAgent,
      inboxVariants,
      "Where is my parcel?",
      { message: "Where is my parcel?", tone: "friendly" },
    ],
  ];

  describe.each(cases)("%s", (_name, agent, variants, text, ticket) => {
    it("the unchanged code asks the recorded question again: the answer goes through, nothing is written", async () => {
      const paused = await pause(agent, text, ticket);
      const before = await checkpointRows(backend.database);
      await refuseChangedQuestions({ agent, database: backend.database, ...paused });
      expect(await checkpointRows(backend.database)).toBe(before);
    });

    it("a question this very build asked is not replayed; one another build asked is, and refused", async () => {
      const [, changed] = variants[0]!;
      const paused = await pause(agent, text, ticket);
      const askedHere = paused.ledger.map((d) => ({ ...d, askedInBuild: "build-1" }));
      const id = paused.ledger[0]!.interruptId;
      // Same build, as the ledger rows say or as the run's start read them: the changed code never runs.
      await refuseChangedQuestions({
        agent: changed,
        database: backend.database,
        ...paused,
        ledger: askedHere,
        build: "build-1",
      });
      await refuseChangedQuestions({
        agent: changed,
        database: backend.database,
        ...paused,
        askedIn: { [id]: "build-1" },
        build: "build-1",
      });
      // Another build asked it (a deploy since), or the build is not known (a development server): replayed, refused.
      for (const [askedInBuild, build] of [
        ["build-0", "build-1"],
        ["build-1", null],
      ] as const) {
        const refused = await refuseChangedQuestions({
          agent: changed,
          database: backend.database,
          ...paused,
          ledger: paused.ledger.map((d) => ({ ...d, askedInBuild })),
          build,
        }).then(
          () => null,
          (error: unknown) => error,
        );
        expect(errorCodeOf(refused), `asked in ${askedInBuild}, answered in ${build}`).toBe(
          "conflict:interrupt_changed",
        );
      }
    });

    it.each(variants)(
      "%s in place: the answer is refused with conflict:interrupt_changed",
      async (_v, changed) => {
        const paused = await pause(agent, text, ticket);
        const before = await checkpointRows(backend.database);
        const refused = await refuseChangedQuestions({
          agent: changed,
          database: backend.database,
          ...paused,
        }).then(
          () => null,
          (error: unknown) => error,
        );
        expect(errorCodeOf(refused)).toBe("conflict:interrupt_changed");
        expect((refused as { details?: unknown }).details).toMatchObject({
          interruptIds: [paused.ledger[0]?.interruptId],
        });
        expect(await checkpointRows(backend.database)).toBe(before);
      },
    );
  });
});
