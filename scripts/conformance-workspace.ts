/**
 * A new workspace and an API token in it, made with the admin token of a `wrangler dev`: what each
 * conformance script (conformance-mcp.ts, conformance-mcp-server.ts) starts a scenario from.
 */
export async function newWorkspaceToken(url: string, admin: string, prefix: string, scopes: string[]): Promise<string> {
  const id = `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
  const headers = { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" };
  await fetch(`${url}/api/workspaces`, { method: "POST", headers, body: JSON.stringify({ id, name: id }) });
  const res = await fetch(`${url}/api/tokens`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: `conformance ${scopes.join(" ")}`, scopes, workspace_id: id }),
  });
  return ((await res.json()) as { token: string }).token;
}
