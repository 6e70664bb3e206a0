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
    fetchJson<{ mayDecide?: DecideVerdictJson[] }>(`/api/threads/${threadId}`)
      .then((view) => {
        if (live) setVerdicts(view.mayDecide ?? []);
      })
      .catch(() => {}); // the decision itself is still checked by the server
    return () => {
      live = false;
    };
  }, [threadId, pendingKey, known]);
  return refusalsOf(verdicts);
}
