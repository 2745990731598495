/**
 * MCP servers (docs/mcp.md): each configured server's status (connected, or its latest discovery's
 * error), when it was discovered, and the tools its runs get; Refresh lists every server's tools again.
 * Below, the assistants connected to Beaver's own /mcp through OAuth (pages/oauth.tsx).
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import { Empty, Loading, Time, useLoad } from "../ui";
import { ConnectedAssistants } from "./oauth";

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
                  <div class="mono small">
                    {server.url} · {server.transport}
                  </div>
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
