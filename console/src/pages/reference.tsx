/**
 * The API reference: Beaver's own OpenAPI document (`/api/openapi.json`, public) rendered here, grouped
 * by tag, with each operation's parameters, request body and responses. Plain rendering, no bundle
 * from any other host.
 */
import { useState } from "preact/hooks";
import { Json, Loading, useLoad } from "../ui";

interface Operation {
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}
interface Doc {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}

export function ReferencePage() {
  const doc = useLoad(async () => (await fetch("/api/openapi.json")).json() as Promise<Doc>, []);
  const [filter, setFilter] = useState("");
  return (
    <section class="panel" aria-label="API reference">
      <Loading state={doc}>
        {(d) => {
          const ops = Object.entries(d.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
          const shown = ops.filter(
            (o) => !filter || `${o.method} ${o.path} ${o.op.summary ?? ""}`.toLowerCase().includes(filter.toLowerCase()),
          );
          const tags = [...new Set(shown.map((o) => o.op.tags?.[0] ?? "other"))];
          return (
            <>
              <h2>
                {d.info.title} API {d.info.version}
              </h2>
              <p>
                {d.info.description} — the document itself: <a href="/api/openapi.json">/api/openapi.json</a>
              </p>
              <label for="api-filter">Filter operations</label>
              <input id="api-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
              {tags.map((tag) => (
                <div key={tag}>
                  <h3>{tag}</h3>
                  {shown
                    .filter((o) => (o.op.tags?.[0] ?? "other") === tag)
                    .map(({ path, method, op }) => (
                      <details key={`${method} ${path}`} class="op">
                        <summary>
                          <span class={`method method-${method}`}>{method.toUpperCase()}</span> <code>{path}</code>{" "}
                          <span class="small">{op.summary}</span>
                        </summary>
                        {op.description ? <p>{op.description}</p> : null}
                        {op.parameters?.length ? (
                          <table>
                            <tbody>
                              {op.parameters.map((p) => (
                                <tr key={`${p.in}:${p.name}`}>
                                  <td>
                                    <code>{p.name}</code>
                                    {p.required ? " *" : ""}
                                  </td>
                                  <td>{p.in}</td>
                                  <td>
                                    <Json value={p.schema} />
                                  </td>
                                </tr>
                              ))}
                            </tbody>
                          </table>
                        ) : null}
                        {op.requestBody?.content
                          ? Object.entries(op.requestBody.content).map(([type, c]) => (
                              <div key={type}>
                                <h4>Request body ({type})</h4>
                                <Json value={c.schema ?? {}} />
                              </div>
                            ))
                          : null}
                        <h4>Responses</h4>
                        <ul>
                          {Object.entries(op.responses ?? {}).map(([status, r]) => (
                            <li key={status}>
                              <strong>{status}</strong> {r.description}
                              {status.startsWith("2") && r.content
                                ? Object.entries(r.content).map(([type, c]) => (
                                    <details key={type}>
                                      <summary>{type}</summary>
                                      <Json value={c.schema ?? {}} />
                                    </details>
                                  ))
                                : null}
                            </li>
                          ))}
                        </ul>
                      </details>
                    ))}
                </div>
              ))}
              <h3>Schemas</h3>
              {Object.entries(d.components?.schemas ?? {}).map(([name, schema]) => (
                <details key={name}>
                  <summary>
                    <code>{name}</code>
                  </summary>
                  <Json value={schema} />
                </details>
              ))}
            </>
          );
        }}
      </Loading>
    </section>
  );
}
