import { randomUUID } from "node:crypto";
import { buildApprovalGraph } from "@/e2e/support/approval-graph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { DrizzleCheckpointSaver } from "../checkpoint/saver";
import { createThread } from "./queries/threads";
import { customerSubjectId, destroySubjectKeys, forgetKeys } from "./vault";

/*
 * Issue 49, keys: a thread filed for a customer is sealed under that customer's key from its first checkpoint. The
 * saver's tables hold ciphertext (no value of the agent's state in clear, under any encoding the serializer uses);
 * the state reads back whole; once the key is destroyed, the thread's values read as absent (never an error) and
 * nothing more is written to it; another customer's thread is untouched.
 */

const NAME = "Ingrid Quaxwell-Sealed";
const ORDER = "ORD-SEALED-9931";

describe.each<Backend>(["pglite", "postgres"])("personal data under keys (%s)", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  beforeAll(async () => {
    backend = await openBackend(kind);
  });
  afterAll(async () => {
    await backend?.close();
  });

  async function pausedThread(email: string | null) {
    const { database } = backend;
    const thread = await createThread({
      db: database.db,
      title: "Sealed",
      customerMessage: `From ${NAME}`,
      orderRef: null,
      subjectEmail: email,
    });
    const graph = buildApprovalGraph(new DrizzleCheckpointSaver(database.sql));
    const config = { configurable: { thread_id: thread.id } };
    await graph.invoke({ order: ORDER, note: NAME }, config);
    return { threadId: thread.id, graph, config };
  }

  async function stored(threadId: string) {
    return backend.database.sql.query<{ type: string; bytes: Uint8Array }>(
      `SELECT type, blob AS bytes FROM checkpoint.checkpoint_blobs WHERE thread_id = $1
       UNION ALL SELECT type, blob FROM checkpoint.checkpoint_writes WHERE thread_id = $1`,
      [threadId],
    );
  }

  it("seals every value and write of a customer's thread, and reads it back whole", async () => {
    const { threadId, graph, config } = await pausedThread("ingrid@example.com");
    const rows = await stored(threadId);
    expect(rows.length).toBeGreaterThan(3);
    for (const row of rows) {
      expect(row.type.startsWith("sealed:"), row.type).toBe(true);
      const bytes = Buffer.from(row.bytes);
      for (const encoding of ["utf8", "latin1", "utf16le", "base64", "hex"] as const) {
        expect(bytes.toString(encoding)).not.toContain(NAME);
        expect(bytes.toString(encoding)).not.toContain(ORDER);
      }
    }
    const [thread] = await backend.database.sql.query<{ subject_id: string }>(
      "SELECT subject_id FROM threads WHERE id = $1",
      [threadId],
    );
    expect(thread?.subject_id).toBe(customerSubjectId("Ingrid@Example.com "));
    const state = await graph.getState(config);
    expect(state.values).toMatchObject({ order: ORDER, note: NAME });
    expect(state.tasks[0]?.interrupts[0]?.value).toMatchObject({ order: ORDER });
    // Resumed from the sealed state in another "process" (no key in memory).
    forgetKeys();
    await graph.invoke(new (await import("@langchain/langgraph")).Command({ resume: "approve" }), config);
    expect((await graph.getState(config)).values.log).toContain("decided approve");
  });

  it("after the key is destroyed, the thread reads as empty and takes no write; others are untouched", async () => {
    const erased = await pausedThread("erase-me@example.com");
    const other = await pausedThread("keep-me@example.com");
    const own = await pausedThread(null);
    const otherBefore = await stored(other.threadId);
    const tampered = await stored(own.threadId);
    expect(tampered.every((r) => r.type.startsWith("sealed:"))).toBe(true);

    const destroyed = await backend.database.db.transaction((tx) =>
      destroySubjectKeys(tx, [customerSubjectId("erase-me@example.com")], "test"),
    );
    expect(destroyed).toBe(1);
    const state = await erased.graph.getState(erased.config);
    expect(state.values).toEqual({ note: "", decision: "", log: [] });
    await expect(
      erased.graph.invoke({ order: ORDER }, erased.config),
      "a write to an erased subject's thread",
    ).rejects.toMatchObject({ code: "conflict:subject_erased" });
    // A second destruction is idempotent.
    expect(
      await backend.database.db.transaction((tx) =>
        destroySubjectKeys(tx, [customerSubjectId("erase-me@example.com")], "again"),
      ),
    ).toBe(0);
    expect(await stored(other.threadId)).toEqual(otherBefore);
    expect((await other.graph.getState(other.config)).values).toMatchObject({ note: NAME });

    // A sealed value changed by one byte does not open: tampering is an error, never a silently different state.
    await backend.database.sql.query(
      `UPDATE checkpoint.checkpoint_blobs SET blob = set_byte(blob, 20, (get_byte(blob, 20) + 1) % 256)
       WHERE thread_id = $1`,
      [own.threadId],
    );
    forgetKeys();
    await expect(own.graph.getState(own.config)).rejects.toThrow();
  });

  it("a thread the saver does not know (no subject) is stored as before", async () => {
    const saver = new DrizzleCheckpointSaver(backend.database.sql);
    const threadId = `plain-${randomUUID()}`;
    await buildApprovalGraph(saver).invoke({ order: ORDER }, { configurable: { thread_id: threadId } });
    const rows = await stored(threadId);
    expect(rows.some((r) => r.type === "json" || r.type === "msgpack")).toBe(true);
    expect(rows.some((r) => r.type.startsWith("sealed:"))).toBe(false);
  });
});
