import { existsSync } from "node:fs";
import { expect, test as setup } from "@playwright/test";
import { ROLES, readIntakeKey, storageStatePath, writeAuthState } from "./users";

/*
 * The setup project (every other test depends on it): the first admin creates a viewer, an operator and a
 * supervisor, and an intake key; each role signs in over the API and its cookies are kept as storage state.
 */
setup("sign in one user per role and issue an intake key", async ({ baseURL }) => {
  expect(baseURL).toBeTruthy();
  await writeAuthState(baseURL as string);
  for (const role of ROLES) expect(existsSync(storageStatePath(role))).toBe(true);
  expect(readIntakeKey()).toMatch(/\S{16,}/);
});
