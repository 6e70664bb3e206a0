import { z } from "zod";
import { requireRole } from "@/lib/auth/principal";
import { ROLES } from "@/lib/auth/roles";
import { updateUser } from "@/lib/auth/users";
import { errorResponse } from "@/lib/errors";
import { assertSameOrigin, parseWith, readJson } from "@/lib/http";

export const dynamic = "force-dynamic";

const change = z
  .object({ role: z.enum(ROLES).optional(), disabled: z.boolean().optional() })
  .refine((c) => c.role !== undefined || c.disabled !== undefined, { message: "set role and/or disabled" });

/** Change a user's role or disable them (admins only; disabling ends their sessions). */
export async function PATCH(request: Request, { params }: { params: Promise<{ userId: string }> }) {
  try {
    assertSameOrigin(request);
    const by = await requireRole(request, "admin");
    const { userId } = await params;
    const body = parseWith(change, await readJson(request), "bad_request:user_change", "The change");
    return Response.json(await updateUser({ userId, ...body, by }));
  } catch (error) {
    return errorResponse(error, "PATCH /api/admin/users/[userId]");
  }
}
