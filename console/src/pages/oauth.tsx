/**
 * Beaver's OAuth authorization page (docs/mcp.md, "Add Beaver to your assistant"): an assistant that
 * adds Beaver's `/mcp` as a connector sends the browser to `/oauth/authorize?…`; the signed-in member
 * sees which client asks, where the code goes, picks the workspace and scopes (never beyond their own)
 * and approves or declines. The API checks everything again (the OAuth routes, docs/mcp.md); this page
 * only shows and forwards. `ConnectedAssistants` lists the workspace's grants with Revoke.
 */
import { useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import { ErrorNote, Loading, Time, useAction, useLoad, Empty } from "../ui";

type Scope = "read" | "member";

export function OAuthAuthorizePage() {
  const query = location.search.replace(/^\?/, "");
  const request = useLoad(() => api("post", "/api/oauth/requests", { body: { query } }), [query]);
  const [workspace, setWorkspace] = useState<string | undefined>(undefined);
  const [scopes, setScopes] = useState<Scope[] | undefined>(undefined);
  const action = useAction();

  const refused = request.error instanceof ApiError ? (request.error.details as { redirect_to?: string } | undefined) : undefined;
  return (
    <section class="panel page" aria-label="Authorize an assistant">
      <h2>Connect an assistant to Beaver</h2>
      {refused?.redirect_to ? (
        <p>
          <a href={refused.redirect_to}>Return to the application</a>
        </p>
      ) : null}
      <Loading state={request}>
        {(r) => {
          const chosenScopes = scopes ?? (r.requested_scopes.filter((s) => (r.grantable_scopes as string[]).includes(s)) as Scope[]);
          const effective = chosenScopes.length > 0 ? chosenScopes : (["read"] as Scope[]).filter((s) => r.grantable_scopes.includes(s));
          const chosenWorkspace = workspace ?? r.workspaces[0]?.id;
          const toggle = (s: Scope) => setScopes(effective.includes(s) ? effective.filter((x) => x !== s) : [...effective, s]);
          return (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void action.run(async () => {
                  const res = await api("post", "/api/oauth/authorize", {
                    body: { query, scopes: effective, ...(chosenWorkspace ? { workspace_id: chosenWorkspace } : {}) },
                  });
                  location.assign(res.redirect_to);
                });
              }}
            >
              <p>
                <strong data-testid="oauth-client">{r.client_name}</strong> (a name the application gave itself) asks to use Beaver's MCP
                tools.
              </p>
              <p>
                Access is sent to <strong class="mono">{r.redirect_host}</strong>
                {r.redirect_is_loopback ? " — a program on your own computer: approve only if you just started it." : "."}
              </p>
              <label for="oauth-workspace">Workspace</label>
              <select id="oauth-workspace" value={chosenWorkspace} onChange={(e) => setWorkspace(e.currentTarget.value)}>
                {r.workspaces.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name} ({w.id})
                  </option>
                ))}
              </select>
              <fieldset>
                <legend>Scopes</legend>
                {r.grantable_scopes.map((s) => (
                  <label key={s} class="row">
                    <input type="checkbox" name={`scope-${s}`} checked={effective.includes(s)} onChange={() => toggle(s)} />
                    {s === "read" ? "read — list and read sessions, tasks and skills" : "member — also send messages to agents"}
                  </label>
                ))}
              </fieldset>
              <div class="row">
                <button type="submit" disabled={action.busy || effective.length === 0}>
                  Approve
                </button>
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  onClick={() =>
                    void action.run(async () => {
                      const res = await api("post", "/api/oauth/deny", { body: { query } });
                      location.assign(res.redirect_to);
                    })
                  }
                >
                  Decline
                </button>
              </div>
              <ErrorNote error={action.error} />
            </form>
          );
        }}
      </Loading>
    </section>
  );
}

/** The workspace's OAuth grants: assistants connected to Beaver's /mcp, each revocable. */
export function ConnectedAssistants() {
  const grants = useLoad(() => api("get", "/api/oauth/grants"), []);
  const action = useAction();
  return (
    <section aria-label="Connected assistants">
      <h3>Assistants connected to Beaver's /mcp</h3>
      <Loading state={grants}>
        {(g) =>
          g.grants.length === 0 ? (
            <Empty>No assistant connected through OAuth.</Empty>
          ) : (
            <ul class="list">
              {g.grants.map((grant) => (
                <li key={grant.id} data-testid="oauth-grant" class="row spread">
                  <span>
                    <strong>{grant.client_name ?? grant.client_id}</strong> · {grant.scopes.join(", ")} · since{" "}
                    <Time ts={grant.created_at * 1000} />
                  </span>
                  <button
                    type="button"
                    class="secondary"
                    disabled={action.busy}
                    onClick={() =>
                      void action.run(async () => {
                        await api("delete", "/api/oauth/grants/{id}", { params: { id: grant.id } });
                        grants.reload();
                      })
                    }
                  >
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Loading>
      <ErrorNote error={action.error} />
    </section>
  );
}
