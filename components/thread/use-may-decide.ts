"use client";

import { useEffect, useState } from "react";
import { fetchJson } from "@/components/ui/fetch-json";

/** A verdict of `mayDecide` as the thread endpoint sends it. */
export interface DecideVerdictJson {
  interruptId: string;
  action: string;
  may: boolean;
  code?: string;
  reason?: string;
}

/** Verdicts → refusal reasons by interrupt id. */
export function refusalsOf(verdicts: readonly DecideVerdictJson[]): Record<string, string> {
  return Object.fromEntries(
    verdicts.filter((v) => !v.may && v.reason).map((v) => [v.interruptId, v.reason as string]),
  );
}

/**
 * Whether the signed-in operator may take each pending decision, and why not: from the server render first, asked
 * again whenever the pending decisions change (a run raised new ones), so forms know the rules before the click.
 */
export function useMayDecide(
  threadId: string,
  pendingKey: string,
  initial: readonly DecideVerdictJson[],
): Record<string, string> {
  const [verdicts, setVerdicts] = useState<readonly DecideVerdictJson[]>(initial);
  const known = verdicts.map((v) => v.interruptId).join(",");
  useEffect(() => {
    if (!pendingKey || pendingKey === known) return;
    let live = true;
    const wanted = pendingKey.split(",");
    // The ledger records a run's new decisions as the run ends: ask again briefly until it has them all.
    const ask = async (attempt: number): Promise<void> => {
      const view = await fetchJson<{ mayDecide?: DecideVerdictJson[] }>(`/api/threads/${threadId}`);
      const got = view.mayDecide ?? [];
      if (!live) return;
      if (wanted.every((id) => got.some((v) => v.interruptId === id)) || attempt >= 5) {
        setVerdicts(got);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 400));
      if (live) await ask(attempt + 1);
    };
    ask(0).catch(() => {}); // the decision itself is still checked by the server
    return () => {
      live = false;
    };
  }, [threadId, pendingKey, known]);
  return refusalsOf(verdicts);
}
