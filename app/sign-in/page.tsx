import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/auth/sign-in-form";
import { DEMO_USERS, demoCredentialsFile, demoUsersEnabled } from "@/lib/auth/bootstrap";
import { currentUser } from "@/lib/auth/page";
import { safeNext } from "@/lib/auth/safe-next";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

/** Operators sign in with email and password; accounts are made by an admin (there is no sign-up). */
export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const search = await searchParams;
  const next = safeNext(search.next);
  const denied = typeof search.denied === "string" ? search.denied : null;
  const user = await currentUser();
  if (user && !denied) redirect(next);
  return (
    <div className="mx-auto max-w-sm space-y-6">
      <h1 className="text-2xl font-semibold">Sign in</h1>
      {denied && user && (
        <p role="alert" className="rounded-md bg-amber-50 p-3 text-sm text-amber-950">
          That page needs the {denied} role; you are signed in as {user.email} ({user.role}).
        </p>
      )}
      <SignInForm next={next} />
      {demoUsersEnabled() && (
        <div className="rounded-md bg-slate-100 p-4 text-sm text-slate-800" data-testid="demo-accounts">
          <p className="font-medium">Demo accounts</p>
          <ul className="mt-1 list-inside list-disc">
            {DEMO_USERS.map((u) => (
              <li key={u.email}>
                <span className="font-mono">{u.email}</span> ({u.role})
              </li>
            ))}
          </ul>
          <p className="mt-2">
            Their password is in <span className="font-mono">{demoCredentialsFile()}</span> on the server.
          </p>
        </div>
      )}
    </div>
  );
}
