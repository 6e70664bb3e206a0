import { z } from "zod";
import { updateUser } from "@/lib/auth/users";
import { ROLES } from "@/lib/contract/roles";
import { json, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

const change = z
  .strictObject({ role: z.enum(ROLES).optional(), disabled: z.boolean().optional() })
  .refine((c) => c.role !== undefined || c.disabled !== undefined, { message: "set role and/or disabled" });

/** Change a user's role or disable them (admins only; disabling ends their sessions). */
export const PATCH = route<{ userId: string }, z.infer<typeof change>>(
  {
    name: "PATCH /api/admin/users/[userId]",
    access: "admin",
    body: { schema: change, code: "bad_request:user_change", what: "The change" },
  },
  async ({ params, body, principal, database: { db } }) =>
    json(await updateUser({ db, userId: params.userId, ...body, by: principal })),
);
