import { z } from "zod";
import { requireRole } from "@/lib/auth/principal";
import { ROLES } from "@/lib/auth/roles";
import { createUser, listUsers } from "@/lib/auth/users";
import { errorResponse } from "@/lib/errors";
import { assertSameOrigin, parseWith, readJson } from "@/lib/http";

export const dynamic = "force-dynamic";

const newUser = z.object({
  email: z.string().trim().email().max(200),
  name: z.string().trim().min(1).max(100),
  password: z.string().min(12).max(128),
  role: z.enum(ROLES),
});

/** Users (admins only). */
export async function GET(request: Request) {
  try {
    await requireRole(request, "admin");
    return Response.json({ items: await listUsers() }, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "GET /api/admin/users");
  }
}

/** Create a user with a password and a role (admins only). The password is hashed, never stored or logged. */
export async function POST(request: Request) {
  try {
    assertSameOrigin(request);
    const by = await requireRole(request, "admin");
    const body = parseWith(newUser, await readJson(request), "bad_request:user", "The new user");
    return Response.json(await createUser({ ...body, by }), { status: 201 });
  } catch (error) {
    return errorResponse(error, "POST /api/admin/users");
  }
}
