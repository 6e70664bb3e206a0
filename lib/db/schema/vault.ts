import { index, pgSchema, text, timestamp } from "drizzle-orm/pg-core";
import { bytea } from "./columns";

/**
 * The data subjects' keys (DESIGN 19) live in a Postgres schema of their own, apart from the data they protect: their
 * grants, their backups and a move to a database of their own are one schema. A key is stored only wrapped by a
 * master key (lib/platform/data-keys.ts). Erasure deletes the subject's row here: every value sealed under it, in
 * every table, archive and backup, is unreadable from then on. Backups of this schema are kept for a shorter time
 * than the data's (README, "Personal data under keys"): once every key backup older than an erasure has expired, the
 * erasure has reached every data backup too.
 */
export const vaultSchema = pgSchema("vault");

/** One row per data subject with a key: `subject_id` is opaque (a blind index of the customer's email, or `t_<thread>`). */
export const subjectKeys = vaultSchema.table(
  "subject_keys",
  {
    subjectId: text("subject_id").primaryKey(),
    /** The master key that wraps it (rotation re-wraps every row not under the current one). */
    masterKeyId: text("master_key_id").notNull(),
    wrapped: bytea("wrapped").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    rewrappedAt: timestamp("rewrapped_at", { withTimezone: true }),
  },
  (t) => [index("subject_keys_master_idx").on(t.masterKeyId)],
);

/** Subjects whose key was destroyed, by erasure: a value sealed for them reads as erased, never as an error. */
export const erasedSubjects = vaultSchema.table("erased_subjects", {
  subjectId: text("subject_id").primaryKey(),
  /** The audit entry of the erasure. */
  erasureId: text("erasure_id").notNull(),
  erasedAt: timestamp("erased_at", { withTimezone: true }).notNull().defaultNow(),
});
