"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { errorMessage } from "@/components/ui/fetch-json";

/**
 * An admin change as the admin page makes it: one at a time (`busy`), its error said in the operator's words, and
 * the page read again from the server once it is applied.
 */
export function useAdminAction() {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      router.refresh();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return { act, busy, error };
}
