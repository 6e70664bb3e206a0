import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { SignOutButton } from "@/components/auth/sign-out-button";
import { UserProvider } from "@/components/auth/user-context";
import { ClaimKeeper } from "@/components/queue/claim-keeper";
import { SearchBox } from "@/components/queue/search-box";
import { NavLink } from "@/components/ui/nav-link";
// Registers the app's agents with the runtime before a page reads a thread.
import "@/lib/agents";
import { currentUser } from "@/lib/auth/page";
import { hasRole } from "@/lib/auth/roles";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Refund console", template: "%s · Refund console" },
  description: "Human-in-the-loop console for checkpointed LangGraph agents",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  const user = await currentUser();
  return (
    <html lang="en">
      <body className="min-h-screen">
        <a
          href="#main"
          className="sr-only rounded-md bg-white px-3 py-2 text-sm font-semibold text-indigo-800 shadow focus:not-sr-only focus:absolute focus:left-4 focus:top-3 focus:z-50"
        >
          Skip to main content
        </a>
        <header className="border-b border-slate-200 bg-white">
          <div className="mx-auto flex max-w-6xl items-center gap-6 px-6 py-3">
            <Link href="/" className="font-semibold text-slate-900">
              Refund console
            </Link>
            {user && (
              <nav aria-label="Main" className="flex items-center gap-2">
                <NavLink href="/" exact>
                  Inbox
                </NavLink>
                {hasRole(user.role, "operator") && <NavLink href="/threads/new">New ticket</NavLink>}
                <NavLink href="/audit">Audit trail</NavLink>
                {hasRole(user.role, "supervisor") && <NavLink href="/operations">Operations</NavLink>}
                {hasRole(user.role, "admin") && <NavLink href="/admin">Admin</NavLink>}
              </nav>
            )}
            {user && <SearchBox />}
            {user && (
              <div
                className="ml-auto flex items-center gap-3 text-sm text-slate-700"
                data-testid="signed-in-as"
              >
                <span>
                  <span className="font-medium text-slate-900">{user.email}</span> · {user.role}
                </span>
                <SignOutButton />
              </div>
            )}
          </div>
        </header>
        <main id="main" tabIndex={-1} className="mx-auto max-w-6xl px-6 py-8 focus:outline-none">
          <UserProvider user={user}>
            <ClaimKeeper />
            {children}
          </UserProvider>
        </main>
      </body>
    </html>
  );
}
