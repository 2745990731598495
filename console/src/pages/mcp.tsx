/**
 * MCP servers (docs/mcp.md): each configured server's status (connected, or its latest discovery's
 * error), when it was discovered, and the tools its runs get; Refresh lists every server's tools again.
 * Below, the assistants connected to Beaver's own /mcp through OAuth (pages/oauth.tsx).
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import { navigate } from "../router";
import { Empty, ErrorNote, Loading, Time, useAction, useLoad } from "../ui";
import { ConnectedAssistants } from "./oauth";

/** "Connect": starts Beaver's OAuth flow to the server and sends the browser to its authorization page. */
function ConnectButton({ name, onConnected }: { name: string; onConnected: () => void }) {
  const action = useAction();
  return (
    <div>
      <button
        type="button"
        disabled={action.busy}
        data-testid="mcp-connect"
        onClick={() =>
          void action.run(async () => {
            const res = await api("post", "/api/mcp/servers/{name}/connect", { params: { name } });
            if (res.authorization_url) location.assign(res.authorization_url);
            else onConnected();
          })
        }
      >
        Connect
      </button>
      <ErrorNote error={action.error} />
    </div>
  );
}

/** `/mcp-servers/callback`: where an MCP server's authorization page sends the browser back. */
export function McpOAuthCallbackPage() {
  const params = new URLSearchParams(location.search);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const code = params.get("code");
    const state = params.get("state");
    if (!code || !state) {
      setError(new Error(params.get("error_description") ?? params.get("error") ?? "The server sent no authorization code"));
      return;
    }
    api("post", "/api/mcp/oauth/callback", { body: { code, state } }).then(
      () => navigate("/mcp-servers"),
      (err: unknown) => setError(err),
    );
  }, []);
  return (
    <section class="panel page" aria-label="Connecting an MCP server">
      <h2>Connecting the MCP server…</h2>
      <ErrorNote error={error} />
    </section>
  );
}

export function McpPage() {
  const [refresh, setRefresh] = useState(0);
  const servers = useLoad(() => api("get", "/api/mcp/servers", { query: refresh > 0 ? { refresh: "true" } : {} }), [refresh]);
  return (
    <section class="panel page" aria-label="MCP servers">
      <div class="row spread">
        <h2>MCP servers</h2>
        <button type="button" class="secondary" disabled={servers.loading} onClick={() => setRefresh((r) => r + 1)}>
          {servers.loading ? "Refreshing…" : "Refresh"}
        </button>
      </div>
      <Loading state={servers}>
        {(s) =>
          s.servers.length === 0 ? (
            <Empty>No MCP server configured: add one under `mcp.servers` in Settings.</Empty>
          ) : (
            <div class="cards">
              {s.servers.map((server) => (
                <div class="card" key={server.name} data-testid="mcp-server">
                  <div class="row spread">
                    <h3>{server.name}</h3>
                    <span class={`status status-${server.status === "connected" ? "completed" : "failed"}`}>{server.status}</span>
                  </div>
                  {server.auth === "oauth" && server.status !== "connected" ? (
                    <ConnectButton name={server.name} onConnected={() => setRefresh((r) => r + 1)} />
                  ) : null}
                  <div class="mono small">
                    {server.url} · {server.transport}
                  </div>
                  {server.personal ? (
                    <div class="muted small" data-testid="mcp-personal">
                      personal: each member connects their own account; the status shown is yours
                    </div>
                  ) : null}
                  <div class="muted small">
                    discovered <Time ts={server.discovered_at} />
                    {server.cached ? " (cached)" : ""}
                  </div>
                  {server.error ? (
                    <div class="error small">
                      <strong>{server.error.code}</strong> {server.error.message}
                    </div>
                  ) : null}
                  {server.tools.length > 0 ? (
                    <ul class="list">
                      {server.tools.map((t) => (
                        <li key={t.name}>
                          <span class="mono">{t.mcp_name}</span> {t.idempotent ? <span class="badge">read-only</span> : null}
                          <div class="muted small">{t.description}</div>
                        </li>
                      ))}
                    </ul>
                  ) : (
                    <Empty>No tools.</Empty>
                  )}
                </div>
              ))}
            </div>
          )
        }
      </Loading>
      <ConnectedAssistants />
    </section>
  );
}
