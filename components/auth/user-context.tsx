"use client";

import { createContext, type ReactNode, useContext } from "react";
import type { SessionUser } from "@/lib/contract/roles";

const UserContext = createContext<SessionUser | null>(null);

/** The signed-in user, read on the server for this request. Pages use it to hide what the role cannot do. */
export function UserProvider({ user, children }: { user: SessionUser | null; children: ReactNode }) {
  return <UserContext.Provider value={user}>{children}</UserContext.Provider>;
}

export function useUser(): SessionUser | null {
  return useContext(UserContext);
}
