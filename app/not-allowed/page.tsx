import type { Metadata } from "next";
import Link from "next/link";
import { currentUser } from "@/lib/auth/page";
import { isRole } from "@/lib/contract/roles";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Not allowed" };

/** A signed-in user below the role a page needs: said plainly, with the way back (not a sign-in form). */
export default async function NotAllowedPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const search = await searchParams;
  const need = isRole(search.need) ? search.need : null;
  const user = await currentUser();
  return (
    <div className="max-w-xl space-y-4" data-testid="not-allowed">
      <h1 className="text-2xl font-semibold">Not allowed</h1>
      <p className="text-slate-800">
        {need ? `That page needs the ${need} role.` : "Your role does not allow that page."}{" "}
        {user ? (
          <>
            You are signed in as <bdi className="font-medium">{user.email}</bdi> ({user.role}). Ask an admin
            if you need more.
          </>
        ) : null}
      </p>
      <Link href="/" className="inline-block font-medium text-indigo-800 underline underline-offset-2">
        Back to the inbox
      </Link>
    </div>
  );
}
