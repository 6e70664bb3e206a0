"use client";

import { type FormEvent, useState } from "react";
import { TableHead } from "@/components/inbox/table-head";
import { Button } from "@/components/ui/button";
import { fetchJson, postJson } from "@/components/ui/fetch-json";
import { controlClass, FieldLabel } from "@/components/ui/field";
import { LocalTime } from "@/components/ui/local-time";
import { useHydrated } from "@/components/ui/use-hydrated";
import { ROLES, type Role } from "@/lib/contract/roles";
import { useAdminAction } from "./use-admin-action";

export interface AdminUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  disabled: boolean;
  createdAt: string;
}

export interface AdminKey {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/**
 * Users and intake keys for admins. Every change goes through the admin API (which checks the role again and writes
 * the audit trail); the page then re-reads from the server. A new key is shown once, right here, and never again.
 */
export function AdminConsole({ me, users, keys }: { me: string; users: AdminUser[]; keys: AdminKey[] }) {
  const hydrated = useHydrated();
  const { act, busy, error } = useAdminAction();
  const [issued, setIssuedKey] = useState<{ name: string; key: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const setIssued = (next: { name: string; key: string } | null) => {
    setIssuedKey(next);
    setCopied(false);
  };
  /** Select the shown key, so Ctrl+C copies it (when the clipboard API is not available). */
  const selectKey = () => {
    const code = document.querySelector('[data-testid="issued-key-value"]');
    if (!code) return;
    const range = document.createRange();
    range.selectNodeContents(code);
    window.getSelection()?.removeAllRanges();
    window.getSelection()?.addRange(range);
  };
  /** A role change picked in a row, waiting for the admin to confirm it (nothing is applied before). */
  const [roleChange, setRoleChange] = useState<{ id: string; email: string; from: Role; to: Role } | null>(
    null,
  );

  const patchUser = (id: string, change: { role?: Role; disabled?: boolean }) =>
    act(() =>
      fetchJson(`/api/admin/users/${encodeURIComponent(id)}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(change),
      }),
    );

  const createUser = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    void act(async () => {
      await postJson("/api/admin/users", {
        email: data.get("email"),
        name: data.get("name"),
        role: data.get("role"),
        password: data.get("password"),
      });
      form.reset();
    });
  };

  const issueKey = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const name = String(new FormData(form).get("keyName") ?? "");
    void act(async () => {
      const result = await postJson<{ key: string }>("/api/admin/keys", { name });
      setIssued({ name, key: result.key });
      form.reset();
    });
  };

  const heading = "text-lg font-semibold text-slate-900";
  const cell = "px-4 py-2 text-left align-middle";
  return (
    <div className="space-y-8" data-testid="admin-console" data-ready={hydrated}>
      {error && (
        <p role="alert" className="rounded-md bg-red-50 p-3 text-sm text-red-900" data-testid="admin-error">
          {error}
        </p>
      )}

      <section aria-labelledby="users-heading" className="space-y-3">
        <h2 id="users-heading" className={heading}>
          Users
        </h2>
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
          <table className="w-full text-sm">
            <TableHead
              columns={[
                { key: "email", label: "Email" },
                { key: "name", label: "Name" },
                { key: "role", label: "Role" },
                { key: "access", label: "Access" },
              ]}
            />
            <tbody>
              {users.map((u) => (
                <tr
                  key={u.id}
                  className="border-t border-slate-200"
                  data-testid="admin-user"
                  data-email={u.email}
                >
                  <td className={`${cell} font-medium`}>{u.email}</td>
                  <td className={cell}>{u.name}</td>
                  <td className={cell}>
                    <label className="sr-only" htmlFor={`role-${u.id}`}>
                      Role of {u.email}
                    </label>
                    <select
                      id={`role-${u.id}`}
                      value={roleChange?.id === u.id ? roleChange.to : u.role}
                      disabled={busy || !hydrated || u.email === me}
                      onChange={(e) =>
                        setRoleChange(
                          e.target.value === u.role
                            ? null
                            : { id: u.id, email: u.email, from: u.role, to: e.target.value as Role },
                        )
                      }
                      className={controlClass}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                    {roleChange?.id === u.id && (
                      <div className="mt-2 space-y-2 text-sm" data-testid="role-confirm">
                        <p>
                          Change <bdi className="font-medium">{roleChange.email}</bdi> from {roleChange.from}{" "}
                          to {roleChange.to}? It applies to their next request.
                        </p>
                        <div className="flex flex-wrap gap-2">
                          <Button
                            data-testid="role-confirm-apply"
                            disabled={busy}
                            onClick={() => {
                              const change = roleChange;
                              setRoleChange(null);
                              void patchUser(change.id, { role: change.to });
                            }}
                          >
                            Change role
                          </Button>
                          <Button variant="secondary" onClick={() => setRoleChange(null)}>
                            Cancel
                          </Button>
                        </div>
                      </div>
                    )}
                  </td>
                  <td className={cell}>
                    {u.email === me ? (
                      <span className="text-slate-700">you</span>
                    ) : (
                      <Button
                        variant={u.disabled ? "secondary" : "danger"}
                        disabled={busy || !hydrated}
                        onClick={() => void patchUser(u.id, { disabled: !u.disabled })}
                        aria-label={`${u.disabled ? "Enable" : "Disable"} ${u.email}`}
                      >
                        {u.disabled ? "Enable" : "Disable"}
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <form
          onSubmit={createUser}
          className="grid gap-3 rounded-lg border border-slate-200 bg-white p-4 md:grid-cols-5"
        >
          <div>
            <FieldLabel htmlFor="new-email">Email</FieldLabel>
            <input id="new-email" name="email" type="email" required className={controlClass} />
          </div>
          <div>
            <FieldLabel htmlFor="new-name">Name</FieldLabel>
            <input id="new-name" name="name" required maxLength={100} className={controlClass} />
          </div>
          <div>
            <FieldLabel htmlFor="new-role">Role</FieldLabel>
            <select id="new-role" name="role" defaultValue="operator" className={controlClass}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </div>
          <div>
            <FieldLabel htmlFor="new-password" hint="(12+ characters)">
              Password
            </FieldLabel>
            <input
              id="new-password"
              name="password"
              type="password"
              autoComplete="new-password"
              minLength={12}
              required
              className={controlClass}
            />
          </div>
          <div className="flex items-end">
            <Button type="submit" disabled={busy || !hydrated} data-testid="create-user">
              Add user
            </Button>
          </div>
        </form>
      </section>

      <section aria-labelledby="keys-heading" className="space-y-3">
        <h2 id="keys-heading" className={heading}>
          Intake API keys
        </h2>
        <p className="text-sm text-slate-700">
          Systems that file tickets send <span className="font-mono">Authorization: Bearer &lt;key&gt;</span>.
          A key can create a ticket and start it, never decide. Only a hash of each key is stored.
        </p>
        {issued && (
          <div
            className="space-y-2 rounded-md bg-emerald-50 p-4 text-sm text-emerald-950"
            data-testid="issued-key"
          >
            <p className="font-medium">New key “{issued.name}”: copy it now, it will not be shown again.</p>
            <code className="block break-all rounded bg-white p-2 font-mono" data-testid="issued-key-value">
              {issued.key}
            </code>
            <div className="flex gap-2">
              <Button
                data-testid="copy-key"
                onClick={() => {
                  // The clipboard needs a secure context; without one, the key is selected for a manual copy.
                  const done = () => setCopied(true);
                  if (navigator.clipboard)
                    void navigator.clipboard.writeText(issued.key).then(done, () => selectKey());
                  else selectKey();
                }}
              >
                {copied ? "Copied" : "Copy key"}
              </Button>
              <Button variant="secondary" onClick={() => setIssued(null)}>
                Done
              </Button>
            </div>
          </div>
        )}
        {keys.length > 0 && (
          <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
            <table className="w-full text-sm">
              <TableHead
                columns={[
                  { key: "name", label: "Name" },
                  { key: "prefix", label: "Starts with" },
                  { key: "issued", label: "Issued" },
                  { key: "used", label: "Last used" },
                  { key: "state", label: "State" },
                ]}
              />
              <tbody>
                {keys.map((k) => (
                  <tr
                    key={k.id}
                    className="border-t border-slate-200"
                    data-testid="admin-key"
                    data-name={k.name}
                  >
                    <td className={`${cell} font-medium`}>{k.name}</td>
                    <td className={`${cell} font-mono`}>{k.prefix}…</td>
                    <td className={cell}>
                      <LocalTime iso={k.createdAt} />
                    </td>
                    <td className={cell}>{k.lastUsedAt ? <LocalTime iso={k.lastUsedAt} /> : "never"}</td>
                    <td className={cell}>
                      {k.revokedAt ? (
                        <span data-testid="key-revoked">revoked</span>
                      ) : (
                        <Button
                          variant="danger"
                          disabled={busy || !hydrated}
                          onClick={() => void act(() => postJson(`/api/admin/keys/${k.id}/revoke`, {}))}
                          aria-label={`Revoke ${k.name}`}
                        >
                          Revoke
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <form onSubmit={issueKey} className="flex flex-wrap items-end gap-3">
          <div>
            <FieldLabel htmlFor="key-name">Key name</FieldLabel>
            <input id="key-name" name="keyName" required maxLength={100} className={controlClass} />
          </div>
          <Button type="submit" disabled={busy || !hydrated} data-testid="issue-key">
            Issue a key
          </Button>
        </form>
      </section>
    </div>
  );
}
