import { z } from "zod";
import { createUser, listUsers } from "@/lib/auth/users";
import { ROLES } from "@/lib/contract/roles";
import { json, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

const newUser = z.strictObject({
  email: z.string().trim().email().max(200),
  name: z.string().trim().min(1).max(100),
  password: z.string().min(12).max(128),
  role: z.enum(ROLES),
});

/** Users (admins only). */
export const GET = route({ name: "GET /api/admin/users", access: "admin" }, async ({ database: { db } }) =>
  json({ items: await listUsers({ db }) }),
);

/** Create a user with a password and a role (admins only). The password is hashed, never stored or logged. */
export const POST = route(
  {
    name: "POST /api/admin/users",
    access: "admin",
    body: { schema: newUser, code: "bad_request:user", what: "The new user" },
  },
  async ({ body, principal, database: { db } }) =>
    json(await createUser({ ...body, db, by: principal }), { status: 201 }),
);
