/**
 * `npm run keys -- status`: data keys per master key id (what a rotation still has to move).
 * `npm run keys:rotate`: re-wrap every data subject's key under the current master key, online, in batches (no data
 * is rewritten; runs may go on). With DATA_MASTER_KEY: put the new key there and the old one in
 * DATA_MASTER_KEYS_RETIRED, run this, then drop the retired one. On the embedded default (the keys file beside the
 * data directory) it makes the new master key itself, keeps the old one as `retired=` until every key is moved, then
 * drops it. Interrupted, it is run again and goes on. Audited. Exits 2 on a usage error, 1 when keys are left.
 * `npm run keys -- seal`: seal the threads filed before personal data was kept under keys (online, batched,
 * resumable, audited; lib/runtime/retention/seal-existing.ts). Exits 1 when threads are left (a run going on them).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { openPglite, openPostgres } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { keysByMaster, rewrapKeys } from "@/lib/db/vault";
import { dataKeys, defaultKeysFile, parseKeysFile } from "@/lib/platform/data-keys";
import { env } from "@/lib/platform/env";
import { writePrivateFile } from "@/lib/platform/private-files";
import { clearSingleton } from "@/lib/platform/singleton";
import { sealExistingThreads } from "@/lib/runtime/retention/seal-existing";
import { usageExit } from "./cli";

const USAGE = "usage: npm run keys -- status | rotate | seal";
const [command, ...rest] = process.argv.slice(2);
if ((command !== "status" && command !== "rotate" && command !== "seal") || rest.length > 0)
  usageExit("keys", USAGE, `unknown command ${command ?? "(none)"}`);

/** The embedded default's keys file, when this process's keys come from it. */
const ownFile =
  !env.DATA_MASTER_KEY && !env.KEY_SERVICE_URL && !env.DATA_KEYS_FILE ? defaultKeysFile() : undefined;

const database = env.DATABASE_URL
  ? openPostgres(env.DATABASE_URL, { max: 2, pooled: env.DATABASE_POOLER === "transaction" })
  : await openPglite(env.PGLITE_DATA_DIR);
try {
  if (command === "status") {
    const current = await dataKeys().service.currentKeyId();
    const counts = await keysByMaster(database.db);
    for (const [id, n] of Object.entries(counts))
      console.log(`${id}${id === current ? " (current)" : ""}: ${n} data keys`);
    if (Object.keys(counts).length === 0) console.log("no data keys yet");
  } else if (command === "seal") {
    // Threads, orders and accounts written before personal data was kept under keys: sealed in place, pass after
    // pass, while serving.
    const total = { subjects: 0, threads: 0, values: 0 };
    for (;;) {
      const pass = await sealExistingThreads(database);
      total.subjects += pass.subjects;
      total.threads += pass.threads;
      total.values += pass.values;
      console.log(
        `sealed ${total.values} values of ${total.threads} threads, orders and accounts (${total.subjects} threads given a subject); ${pass.remaining} threads, orders or accounts left${pass.busy ? `, ${pass.busy} busy` : ""}`,
      );
      if (pass.remaining === 0 || pass.subjects + pass.values === 0) {
        process.exitCode = pass.remaining === 0 ? 0 : 1;
        if (pass.remaining > 0) console.log("the threads left have a run going: run this again later");
        break;
      }
    }
  } else {
    if (ownFile) newMasterInFile(ownFile);
    const current = await dataKeys().service.currentKeyId();
    const before = await keysByMaster(database.db);
    let moved = 0;
    for (;;) {
      const { rewrapped, remaining } = await rewrapKeys(database.db);
      moved += rewrapped;
      console.log(`re-wrapped ${moved} data keys under ${current}; ${remaining} left`);
      if (remaining === 0 || rewrapped === 0) {
        process.exitCode = remaining === 0 ? 0 : 1;
        break;
      }
    }
    await recordAudit({
      db: database.db,
      entries: [
        {
          action: "keys_rotated",
          actor: { id: "system:keys", label: "keys:rotate", role: null },
          detail: { current, moved, before },
        },
      ],
    });
    if (process.exitCode === 0 && ownFile) dropRetiredFromFile(ownFile);
    if (process.exitCode === 0 && env.DATA_MASTER_KEYS_RETIRED)
      console.log("every data key is under the current master key: DATA_MASTER_KEYS_RETIRED can be removed");
  }
} finally {
  await database.close();
}

/** Put a new master key first in the keys file, the current one kept as `retired=` (unless a rotation is under way). */
function newMasterInFile(path: string): void {
  dataKeys(); // makes the file when there is none yet
  const file = parseKeysFile(readFileSync(path, "utf8"), path);
  if (file.retired.length > 0) return;
  const stamp = `k${new Date()
    .toISOString()
    .replace(/[-:T.Z]/g, "")
    .slice(0, 14)}`;
  const id = stamp === file.master.id ? `${stamp}b` : stamp;
  writePrivateFile(
    path,
    `master=${id}:${randomBytes(32).toString("base64")}\nretired=${file.master.id}:${file.master.key.toString("base64")}\nindex=${file.index.toString("base64")}\n`,
  );
  clearSingleton("data-keys");
  console.log(`made master key ${id}; ${file.master.id} is retired until every data key is moved`);
}

function dropRetiredFromFile(path: string): void {
  const file = parseKeysFile(readFileSync(path, "utf8"), path);
  if (file.retired.length === 0) return;
  writePrivateFile(
    path,
    `master=${file.master.id}:${file.master.key.toString("base64")}\nindex=${file.index.toString("base64")}\n`,
  );
  console.log(`every data key is under ${file.master.id}: the retired master key is gone from ${path}`);
}
