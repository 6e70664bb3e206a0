import { canonicalPayload } from "@/lib/contract/canonical-json";
import type { SeenEffect, SeenQuestion, ShadowOutcome } from "./shadow";

/*
 * The deploy shadow's verdict on one thread: the candidate build's outcome beside the serving build's. Worst first —
 * the candidate fails where the serving build does not; money would move differently (amounts by effect kind, order
 * and currency); effects would differ otherwise (kind, recipient, text, method, authorization); the question the thread
 * waits on, or the next one, would differ; or the same.
 */

export const VERDICTS = ["error", "amounts_changed", "effects_changed", "question_changed", "same"] as const;
export type Verdict = (typeof VERDICTS)[number];

export const VERDICT_WORDS: Record<Verdict, string> = {
  error: "error",
  amounts_changed: "amounts changed",
  effects_changed: "effects changed",
  question_changed: "question changed",
  same: "same next question",
};

export interface ThreadVerdict {
  threadId: string;
  agent: string;
  /** `pinned → ran on` for the candidate (with "migrated" when its migration moved it). */
  versions: string;
  verdict: Verdict;
  /** Whether money or something the customer sees would differ: the command exits non-zero. */
  consequential: boolean;
  /** What differs, in words. */
  details: string[];
}

export function judge(serving: ShadowOutcome, candidate: ShadowOutcome): ThreadVerdict {
  const details: string[] = [];
  const base = {
    threadId: candidate.threadId,
    agent: candidate.agent,
    versions: `${candidate.pinned} → ${candidate.ranOn ?? "—"}${candidate.migrated ? " (migrated)" : ""}`,
  };
  if (candidate.error && candidate.error.code !== serving.error?.code) {
    details.push(`the candidate fails: ${candidate.error.code} — ${candidate.error.message}`);
    if (serving.error) details.push(`the serving build fails otherwise: ${serving.error.code}`);
    return { ...base, verdict: "error", consequential: true, details };
  }
  if (serving.error && !candidate.error) {
    details.push(`the serving build fails here (${serving.error.code}); the candidate continues the thread`);
  }
  const moneyBefore = amounts(serving.effects);
  const moneyAfter = amounts(candidate.effects);
  const moneyKeys = [...new Set([...moneyBefore.keys(), ...moneyAfter.keys()])].sort();
  let moneyChanged = false;
  for (const key of moneyKeys) {
    const before = moneyBefore.get(key) ?? 0;
    const after = moneyAfter.get(key) ?? 0;
    if (before === after) continue;
    moneyChanged = true;
    details.push(`${key}: ${before} → ${after} cents`);
  }
  if (moneyChanged) {
    return { ...base, verdict: "amounts_changed", consequential: true, details };
  }
  const effectsBefore = serving.effects.map(effectKey).sort();
  const effectsAfter = candidate.effects.map(effectKey).sort();
  if (effectsBefore.join("\n") !== effectsAfter.join("\n")) {
    const after = new Set(effectsAfter);
    const before = new Set(effectsBefore);
    for (const e of serving.effects.filter((e) => !after.has(effectKey(e))))
      details.push(`no longer: ${effectWords(e)}`);
    for (const e of candidate.effects.filter((e) => !before.has(effectKey(e))))
      details.push(`new: ${effectWords(e)}`);
    return { ...base, verdict: "effects_changed", consequential: true, details };
  }
  const changedQuestions: SeenQuestion[] = [];
  if (!candidate.askedAsRecorded) {
    details.push("the question the thread waits on is asked differently");
    changedQuestions.push(...candidate.asked);
  }
  const nextBefore = serving.next.map(questionKey).sort();
  const nextAfter = candidate.next.map(questionKey).sort();
  if (nextBefore.join("\n") !== nextAfter.join("\n")) {
    details.push(`the next question differs: ${summary(serving.next)} → ${summary(candidate.next)}`);
    changedQuestions.push(...serving.next, ...candidate.next);
  }
  if (changedQuestions.length > 0) {
    // A question whose answer acts (approve a refund, send an email) shows the money or the customer's words.
    const consequential = changedQuestions.some((q) => q.acts);
    return { ...base, verdict: "question_changed", consequential, details };
  }
  return { ...base, verdict: "same", consequential: false, details };
}

/** Money an outcome's effects move, by `kind order currency`. */
function amounts(effects: readonly SeenEffect[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const e of effects) {
    const cents = e.payload.amountCents;
    if (typeof cents !== "number") continue;
    const key = [e.kind, e.payload.orderId ?? e.payload.account ?? "", e.payload.currency ?? ""]
      .join(" ")
      .trim();
    sums.set(key, (sums.get(key) ?? 0) + cents);
  }
  return sums;
}

function effectKey(e: SeenEffect): string {
  return `${e.kind}${e.authorized ? "" : " (held: not authorized)"} ${canonicalPayload(e.payload)}`;
}

/**
 * An effect in words for the report, which is kept: its kind, money fields and method; anything else (an email's
 * address and text: a customer's personal data) only as a digest of its content.
 */
function effectWords(e: SeenEffect): string {
  const shown = ["orderId", "amountCents", "currency", "method", "field"].flatMap((k) =>
    e.payload[k] === undefined ? [] : [`${k} ${String(e.payload[k])}`],
  );
  const rest = Object.keys(e.payload).filter(
    (k) => !["orderId", "amountCents", "currency", "method", "field"].includes(k),
  );
  const digest =
    rest.length > 0
      ? [`content ${contentDigest(canonicalPayload(Object.fromEntries(rest.map((k) => [k, e.payload[k]]))))}`]
      : [];
  return `${e.kind}${e.authorized ? "" : " (held: not authorized)"}: ${[...shown, ...digest].join(", ")}`;
}

/** A short, stable digest of a text (FNV-1a): tells two contents apart without keeping them. */
function contentDigest(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

function questionKey(q: SeenQuestion): string {
  return `${q.action} ${canonicalPayload(q.payload)}`;
}

function summary(questions: readonly SeenQuestion[]): string {
  return questions.length === 0 ? "none (the thread ends)" : questions.map((q) => q.action).join(", ");
}

/** Threads by verdict, every verdict present. */
export function tally(verdicts: readonly ThreadVerdict[]): Record<Verdict, number> {
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const v of verdicts) counts[v.verdict] += 1;
  return counts;
}
