"use client";

import { useEffect } from "react";
import { useUser } from "@/components/auth/user-context";
import { hasRole } from "@/lib/contract/roles";

/** How often an open tab renews its user's claims (the server's TTL is a minute by default: three chances). */
const RENEW_MS = 20_000;

/**
 * Keeps the signed-in operator's claims alive while any tab of the console is open — the inbox, or the thread they
 * are deciding on. When the last tab closes, the heartbeat stops and the claims expire after their TTL.
 */
export function ClaimKeeper() {
  const user = useUser();
  const operator = hasRole(user?.role, "operator");
  useEffect(() => {
    if (!operator) return;
    const renew = () => {
      if (document.visibilityState === "hidden") return;
      void fetch("/api/inbox/claims/renew", { method: "POST", keepalive: true }).catch(() => {});
    };
    const timer = setInterval(renew, RENEW_MS);
    return () => clearInterval(timer);
  }, [operator]);
  return null;
}
