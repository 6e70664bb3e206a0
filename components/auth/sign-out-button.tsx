"use client";

import { useState } from "react";

/** Ends the session on the server, then leaves for the sign-in page (nothing of the console stays reachable). */
export function SignOutButton() {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      data-testid="sign-out"
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        await fetch("/api/auth/sign-out", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }).catch(() => {});
        window.location.assign("/sign-in");
      }}
      className="rounded-md px-2 py-1 text-sm font-medium text-slate-700 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-indigo-600 disabled:text-slate-400"
    >
      Sign out
    </button>
  );
}
