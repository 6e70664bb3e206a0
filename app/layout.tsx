import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { SignOutButton } from "@/components/auth/sign-out-button";
import { UserProvider } from "@/components/auth/user-context";
import { ClaimKeeper } from "@/components/queue/claim-keeper";
import { SearchBox } from "@/components/queue/search-box";
import { KeyboardHelp } from "@/components/ui/keyboard-help";
import { NavLink } from "@/components/ui/nav-link";
// Registers the app's agents with the runtime before a page reads a thread.
import "@/lib/agents/index";
import { currentUser } from "@/lib/auth/page";
import { hasRole, type Role } from "@/lib/contract/roles";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Refund console", template: "%s · Refund console" },
  description: "Human-in-the-loop console for checkpointed LangGraph agents",
};

/** The main navigation's links, by role (the header row and the collapsed menu share them). */
function MainLinks({ role }: { role: Role }) {
  return (
    <>
      <NavLink href="/" exact>
        Inbox
      </NavLink>
      {hasRole(role, "operator") && <NavLink href="/threads/new">New ticket</NavLink>}
      <NavLink href="/audit">Audit trail</NavLink>
      {hasRole(role, "supervisor") && <NavLink href="/operations">Operations</NavLink>}
      {hasRole(role, "admin") && <NavLink href="/admin">Admin</NavLink>}
    </>
  );
}

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
          {/* One row from md up (the account's email shortens first, then the search box); below md the search box
              takes a row of its own. */}
          <div
            className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-3 sm:gap-x-6 sm:px-6 md:flex-nowrap"
            data-testid="header-row"
          >
            <Link href="/" className="shrink-0 font-semibold text-slate-900">
              Refund console
            </Link>
            {user && (
              <>
                <nav aria-label="Main" className="hidden shrink-0 items-center gap-2 md:flex">
                  <MainLinks role={user.role} />
                </nav>
                {/* One search box at every width (its id is the page's): in the bar from md up, below md a row of
                    its own under the logo and the menu, so search is one tap away on a phone too. */}
                <div className="order-last w-full md:order-none md:w-auto md:min-w-0 md:shrink">
                  <SearchBox />
                </div>
                <div
                  className="ml-auto hidden min-w-0 items-center gap-3 text-sm text-slate-700 md:flex"
                  data-testid="signed-in-as"
                >
                  <span className="min-w-0 truncate">
                    <bdi className="font-medium text-slate-900">{user.email}</bdi> · {user.role}
                  </span>
                  <SignOutButton />
                </div>
                {/* Below md the header collapses into a menu: the links and the account, one tap away. */}
                <details className="group relative ml-auto md:hidden" data-testid="header-menu">
                  <summary className="flex cursor-pointer list-none items-center gap-1 rounded-md px-3 py-2 text-sm font-medium text-slate-900 ring-1 ring-inset ring-slate-300 hover:bg-slate-50 [&::-webkit-details-marker]:hidden">
                    Menu <span aria-hidden="true">{"\u25BE"}</span>
                  </summary>
                  <div className="absolute right-0 z-40 mt-2 w-72 max-w-[calc(100vw-2rem)] space-y-3 rounded-md bg-white p-3 shadow-lg ring-1 ring-slate-300">
                    <nav aria-label="Main (menu)" className="flex flex-col gap-1">
                      <MainLinks role={user.role} />
                    </nav>
                    <div className="space-y-2 border-t border-slate-200 pt-3 text-sm text-slate-700">
                      <p className="break-all">
                        <bdi className="font-medium text-slate-900">{user.email}</bdi> · {user.role}
                      </p>
                      <SignOutButton />
                    </div>
                  </div>
                </details>
              </>
            )}
            {/* `?` on any page; the button is the same list for those who do not know the key. */}
            <div className={user ? "shrink-0" : "ml-auto shrink-0"}>
              <KeyboardHelp />
            </div>
          </div>
        </header>
        <main
          id="main"
          tabIndex={-1}
          className="mx-auto max-w-6xl px-4 py-6 focus:outline-none sm:px-6 sm:py-8"
        >
          <UserProvider user={user}>
            <ClaimKeeper />
            {children}
          </UserProvider>
        </main>
      </body>
    </html>
  );
}
