"use client";

import { type FormEvent, useState } from "react";
import { Button } from "@/components/ui/button";
import { useHydrated } from "@/components/ui/use-hydrated";

/** Email + password against better-auth's endpoint; on success the browser goes where it was headed. */
export function SignInForm({ next }: { next: string }) {
  const hydrated = useHydrated();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const res = await fetch("/api/auth/sign-in/email", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: form.get("email"), password: form.get("password") }),
      });
      if (res.ok) {
        window.location.assign(next);
        return;
      }
      setError(
        res.status === 429
          ? "Too many sign-in attempts. Wait a while, then try again."
          : res.status === 503
            ? "The console is busy signing others in. Try again in a moment."
            : "The email or password is not right, or the account is disabled.",
      );
    } catch {
      setError("The console could not be reached. Check the connection and try again.");
    }
    setBusy(false);
  };

  const input =
    "mt-1 block w-full rounded-md border border-slate-400 px-3 py-2 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-indigo-600";
  return (
    <form onSubmit={submit} className="space-y-4" data-testid="sign-in-form" data-ready={hydrated}>
      <div>
        <label htmlFor="email" className="block text-sm font-medium text-slate-900">
          Email
        </label>
        <input id="email" name="email" type="email" autoComplete="username" required className={input} />
      </div>
      <div>
        <label htmlFor="password" className="block text-sm font-medium text-slate-900">
          Password
        </label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          className={input}
        />
      </div>
      {error && (
        <p role="alert" className="rounded-md bg-red-50 p-3 text-sm text-red-900" data-testid="sign-in-error">
          {error}
        </p>
      )}
      <Button type="submit" disabled={busy || !hydrated} data-testid="sign-in-submit">
        {busy ? "Signing in…" : "Sign in"}
      </Button>
    </form>
  );
}
