/**
 * Settings: the workspace configuration as JSON, checked by the server's schema on save (errors show
 * their field paths); secrets by name only (values are write-only); tokens — a new token's secret is
 * shown once, then only its name and scopes.
 */
import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import { ErrorNote, Loading, Time, useAction, useLoad } from "../ui";

export function SettingsPage() {
  return (
    <section class="panel" aria-label="Settings">
      <h2>Settings</h2>
      <ConfigEditor />
      <Secrets />
      <Tokens />
    </section>
  );
}

function ConfigEditor() {
  const [tick, setTick] = useState(0);
  const config = useLoad(() => api("get", "/api/config"), [tick]);
  const [text, setText] = useState("");
  const [saved, setSaved] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (config.data) setText(JSON.stringify(config.data, null, 2));
  }, [config.data]);
  const save = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (err) {
        throw new ApiError(0, "invalid_json", `Not valid JSON: ${(err as Error).message}`);
      }
      await api("put", "/api/config", { body: body as never });
      setSaved(true);
      setTick((t) => t + 1);
    });
  };
  const issues = action.error instanceof ApiError ? issuesOf(action.error.details) : [];
  return (
    <form onSubmit={save} aria-label="Workspace configuration">
      <h3>Workspace configuration</h3>
      <Loading state={config}>
        {() => (
          <>
            <label for="config">Configuration (JSON; unknown keys are refused with their path)</label>
            <textarea
              id="config"
              class="mono"
              rows={16}
              value={text}
              onInput={(e) => setText(e.currentTarget.value)}
              spellcheck={false}
              aria-invalid={action.error ? true : undefined}
            />
          </>
        )}
      </Loading>
      <div class="row">
        <button type="submit" disabled={action.busy}>
          Save configuration
        </button>
        {saved ? <span role="status">Saved.</span> : null}
      </div>
      {issues.length > 0 ? (
        <div class="error" role="alert">
          <strong>{(action.error as ApiError).message}</strong>
          <ul>
            {issues.map((i, n) => (
              <li key={n}>
                <code>{i.path || "(root)"}</code>: {i.message}
              </li>
            ))}
          </ul>
        </div>
      ) : (
        <ErrorNote error={action.error} />
      )}
    </form>
  );
}

/** Field paths and messages from a validation error's details, whatever their exact shape. */
function issuesOf(details: unknown): { path: string; message: string }[] {
  const list = Array.isArray(details)
    ? details
    : Array.isArray((details as { issues?: unknown })?.issues)
      ? (details as { issues: unknown[] }).issues
      : [];
  return list
    .filter((x): x is { path?: unknown; message?: unknown } => typeof x === "object" && x !== null)
    .map((x) => ({ path: Array.isArray(x.path) ? x.path.join(".") : String(x.path ?? ""), message: String(x.message ?? "") }));
}

function Secrets() {
  const [tick, setTick] = useState(0);
  const list = useLoad(() => api("get", "/api/secrets"), [tick]);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const action = useAction();
  return (
    <div aria-label="Secrets">
      <h3>Secrets</h3>
      <Loading state={list}>
        {(s) => (
          <table>
            <thead>
              <tr>
                <th>name</th>
                <th>updated</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {s.secrets.map((x) => (
                <tr key={x.name}>
                  <td class="mono">{x.name}</td>
                  <td>
                    <Time ts={x.updated_at} />
                  </td>
                  <td>
                    <button
                      type="button"
                      class="small danger"
                      onClick={() =>
                        action.run(
                          async () => (await api("delete", "/api/secrets/{name}", { params: { name: x.name } }), setTick((t) => t + 1)),
                        )
                      }
                    >
                      Delete {x.name}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loading>
      <form
        class="grid"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await api("put", "/api/secrets/{name}", { params: { name }, body: { value } });
            setName("");
            setValue("");
            setTick((t) => t + 1);
          });
        }}
      >
        <label for="secret-name">Name</label>
        <input id="secret-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        <label for="secret-value">Value (write-only)</label>
        <input
          id="secret-value"
          type="password"
          autoComplete="off"
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          required
        />
        <button type="submit" disabled={action.busy}>
          Save secret
        </button>
      </form>
      <ErrorNote error={action.error} />
    </div>
  );
}

function Tokens() {
  const [tick, setTick] = useState(0);
  const list = useLoad(() => api("get", "/api/tokens"), [tick]);
  const [name, setName] = useState("");
  const [scope, setScope] = useState<"admin" | "member" | "read">("member");
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const action = useAction();
  return (
    <div aria-label="Tokens">
      <h3>Tokens</h3>
      {created ? (
        <div class="card" role="status">
          New token <strong>{created.name}</strong> — copy it now, it is not shown again:
          <pre class="mono" data-testid="new-token">
            {created.token}
          </pre>
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      ) : null}
      <Loading state={list}>
        {(t) => (
          <table>
            <thead>
              <tr>
                <th>name</th>
                <th>scopes</th>
                <th>created</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {t.tokens.map((x) => (
                <tr key={x.id}>
                  <td>{x.name}</td>
                  <td>{x.scopes.join(", ")}</td>
                  <td>
                    <Time ts={x.created_at} />
                  </td>
                  <td>
                    {x.revoked_at ? (
                      <span class="muted">revoked</span>
                    ) : (
                      <button
                        type="button"
                        class="small danger"
                        onClick={() =>
                          action.run(async () => (await api("delete", "/api/tokens/{id}", { params: { id: x.id } }), setTick((n) => n + 1)))
                        }
                      >
                        Revoke {x.name}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loading>
      <form
        class="grid"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const res = await api("post", "/api/tokens", { body: { name, scopes: [scope] } });
            setCreated({ name: res.name, token: res.token });
            setName("");
            setTick((n) => n + 1);
          });
        }}
      >
        <label for="token-name">Token name</label>
        <input id="token-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        <label for="token-scope">Scope</label>
        <select id="token-scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as typeof scope)}>
          <option value="read">read</option>
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
        <button type="submit" disabled={action.busy}>
          Create token
        </button>
      </form>
      <ErrorNote error={action.error} />
    </div>
  );
}
