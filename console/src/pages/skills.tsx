/**
 * Skills: workspace and builtin skills with status, version and source; one skill's versions with
 * their files, a diff between two versions, rollback, enable/disable, and uploading an archive as the
 * next version, and its stats from run receipts (docs/skills-and-plugins.md; docs/learning.md, "Skill stats").
 * This is the Installed tab of the Skills area (skills-area.tsx).
 */
import { useState } from "preact/hooks";
import { api, getText, urlOf } from "../api/client";
import { lineDiff } from "../diff";
import { ErrorNote, Json, Link, Loading, Status, Time, useAction, useLoad } from "../ui";
import { navigate } from "../router";
import { SkillStats } from "./skill-stats";

interface SkillRow {
  name: string;
  source_kind: string;
  status: string;
  current_version: string | null;
  description: string;
  plugin_id: string | null;
}
interface VersionRow {
  version: string;
  content_hash: string;
  provenance: Record<string, unknown>;
  safety_level: string;
  file_count: number;
  total_bytes: number;
  created_by: string;
  created_at: number;
}
interface VersionDetail extends VersionRow {
  files: { path: string; size: number; executable: boolean; sha256: string }[];
  frontmatter: Record<string, unknown>;
  safety: unknown;
}

export function SkillsPage({ name }: { name: string | undefined }) {
  const [tick, setTick] = useState(0);
  const skills = useLoad(async () => (await api("get", "/api/skills")).skills as unknown as SkillRow[], [tick]);
  return (
    <div class="split">
      <aside class="sidebar" aria-label="Skills">
        <h2>Skills</h2>
        <Upload onDone={(n) => (setTick((t) => t + 1), navigate(`/skills/${encodeURIComponent(n)}`))} />
        <Loading state={skills}>
          {(list) => (
            <table>
              <thead>
                <tr>
                  <th>name</th>
                  <th>status</th>
                  <th>version</th>
                  <th>source</th>
                </tr>
              </thead>
              <tbody>
                {list.map((s) => (
                  <tr key={`${s.name}:${s.source_kind}`} class={s.name === name ? "current" : undefined}>
                    <td>
                      <Link href={`/skills/${encodeURIComponent(s.name)}`}>{s.name}</Link>
                    </td>
                    <td>
                      <Status value={s.status} />
                    </td>
                    <td class="mono">{s.current_version ?? "builtin"}</td>
                    <td>
                      {s.source_kind}
                      {s.plugin_id ? ` (${s.plugin_id})` : ""}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Loading>
      </aside>
      {name ? (
        <SkillDetail key={name} name={name} outerTick={tick} onChanged={() => setTick((t) => t + 1)} />
      ) : (
        <section class="panel muted">Pick a skill.</section>
      )}
    </div>
  );
}

function Upload({ onDone }: { onDone: (name: string) => void }) {
  const [name, setName] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (!file || !name) return;
    void action.run(async () => {
      const type = file.name.endsWith(".zip") ? "application/zip" : "application/gzip";
      await api("put", "/api/skills/{name}/upload", { params: { name }, raw: await file.arrayBuffer(), contentType: type });
      onDone(name);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Upload a skill">
      <h3>Upload a skill</h3>
      <label for="skill-name">Name</label>
      <input id="skill-name" value={name} onInput={(e) => setName(e.currentTarget.value)} pattern="[a-z0-9_\-]{1,64}" required />
      <label for="skill-archive">Archive (.tar.gz or .zip with SKILL.md)</label>
      <input
        id="skill-archive"
        type="file"
        accept=".tar.gz,.tgz,.zip,.tar"
        onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        required
      />
      <button type="submit" disabled={action.busy}>
        Upload as next version
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}

function SkillDetail({ name, outerTick, onChanged }: { name: string; outerTick: number; onChanged: () => void }) {
  const [tick, setTick] = useState(0);
  const changed = () => (setTick((t) => t + 1), onChanged());
  const skill = useLoad(
    async () => (await api("get", "/api/skills/{name}", { params: { name } })) as unknown as SkillRow & { current: VersionDetail },
    [name, tick, outerTick],
  );
  const versions = useLoad(async () => {
    // Only once the skill is read: a builtin skill has no versions to ask for.
    if (!skill.data || skill.data.source_kind === "builtin") return null;
    return (await api("get", "/api/skills/{name}/versions", { params: { name } })) as unknown as {
      current_version: string;
      versions: VersionRow[];
      audit: { action: string; detail: unknown; actor: string; at: number }[];
    };
  }, [name, tick, outerTick, skill.data?.source_kind, skill.data === undefined]);
  const action = useAction();
  const [shown, setShown] = useState<string | null>(null);
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  return (
    <section class="panel" aria-label={`Skill ${name}`}>
      <Loading state={skill}>
        {(s) => (
          <>
            <h2>
              {s.name} <Status value={s.status} />
            </h2>
            <p>{s.description}</p>
            <p class="small">
              source: {s.source_kind}
              {s.plugin_id ? ` · plugin ${s.plugin_id}` : ""} · current version:{" "}
              <span class="mono" data-testid="current-version">
                {s.current_version ?? "builtin"}
              </span>
            </p>
            {s.source_kind !== "builtin" ? (
              <div class="row">
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    action.run(
                      async () => (
                        await api("post", s.status === "disabled" ? "/api/skills/{name}/enable" : "/api/skills/{name}/disable", {
                          params: { name },
                        }),
                        changed()
                      ),
                    )
                  }
                >
                  {s.status === "disabled" ? "Enable" : "Disable"}
                </button>
              </div>
            ) : null}
            <ErrorNote error={action.error} />
            <h3>Files of {s.current.version ?? "the builtin"}</h3>
            <Files name={name} version={s.current.version ?? (s.source_kind === "builtin" ? "builtin" : null)} files={s.current.files} />
          </>
        )}
      </Loading>
      <SkillStats name={name} tick={tick + outerTick} />
      {versions.data ? (
        <>
          <h3>Versions</h3>
          <table>
            <thead>
              <tr>
                <th>version</th>
                <th>created</th>
                <th>by</th>
                <th>safety</th>
                <th>files</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {versions.data.versions.map((v) => (
                <tr key={v.version}>
                  <td class="mono">
                    {v.version} {v.version === versions.data!.current_version ? <span class="badge">current</span> : null}
                  </td>
                  <td>
                    <Time ts={v.created_at} />
                  </td>
                  <td>{v.created_by}</td>
                  <td>{v.safety_level}</td>
                  <td>
                    <button
                      type="button"
                      class="link small"
                      onClick={() => setShown(shown === v.version ? null : v.version)}
                      aria-expanded={shown === v.version}
                    >
                      {v.file_count} files
                    </button>
                  </td>
                  <td>
                    {v.version !== versions.data!.current_version ? (
                      <button
                        type="button"
                        class="small"
                        disabled={action.busy}
                        onClick={() =>
                          action.run(
                            async () => (
                              await api("post", "/api/skills/{name}/rollback", { params: { name }, body: { version: v.version } }),
                              changed()
                            ),
                          )
                        }
                      >
                        Roll back to {v.version}
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {shown ? <VersionFiles name={name} version={shown} /> : null}
          <form
            class="row"
            onSubmit={(e) => {
              e.preventDefault();
            }}
          >
            <label for="diff-from">Diff from</label>
            <select id="diff-from" value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
              <option value="">—</option>
              {versions.data.versions.map((v) => (
                <option key={v.version}>{v.version}</option>
              ))}
            </select>
            <label for="diff-to">to</label>
            <select id="diff-to" value={to} onChange={(e) => setTo(e.currentTarget.value)}>
              <option value="">—</option>
              {versions.data.versions.map((v) => (
                <option key={v.version}>{v.version}</option>
              ))}
            </select>
          </form>
          {from && to && from !== to ? <VersionDiff name={name} from={from} to={to} /> : null}
          <details>
            <summary>Audit</summary>
            <Json value={versions.data.audit} />
          </details>
        </>
      ) : (
        <ErrorNote error={versions.error} />
      )}
    </section>
  );
}

function Files({ name, version, files }: { name: string; version: string | null; files: VersionDetail["files"] }) {
  const [open, setOpen] = useState<string | null>(null);
  const text = useLoad(
    async () => (open && version ? getText(urlOf("/api/skills/{name}/versions/{version}/file", { name, version }, { path: open })) : null),
    [open, version],
  );
  return (
    <>
      <ul class="list">
        {files.map((f) => (
          <li key={f.path}>
            {version ? (
              <button type="button" class="link" onClick={() => setOpen(open === f.path ? null : f.path)} aria-expanded={open === f.path}>
                {f.path}
              </button>
            ) : (
              f.path
            )}{" "}
            <span class="muted small">
              {f.size} B{f.executable ? " · executable" : ""}
            </span>
          </li>
        ))}
      </ul>
      {open && text.data !== undefined && text.data !== null ? <Json value={text.data} /> : <ErrorNote error={text.error} />}
    </>
  );
}

function VersionFiles({ name, version }: { name: string; version: string }) {
  const detail = useLoad(
    async () => (await api("get", "/api/skills/{name}/versions/{version}", { params: { name, version } })) as unknown as VersionDetail,
    [name, version],
  );
  return (
    <div class="card" aria-label={`Files of ${version}`}>
      <h4>Files of {version}</h4>
      <Loading state={detail}>{(d) => <Files name={name} version={version} files={d.files} />}</Loading>
    </div>
  );
}

async function versionFiles(name: string, version: string): Promise<Map<string, string>> {
  const detail = (await api("get", "/api/skills/{name}/versions/{version}", { params: { name, version } })) as unknown as VersionDetail;
  const out = new Map<string, string>();
  await Promise.all(
    detail.files.map(async (f) =>
      out.set(f.path, await getText(urlOf("/api/skills/{name}/versions/{version}/file", { name, version }, { path: f.path }))),
    ),
  );
  return out;
}

export function VersionDiff({ name, from, to }: { name: string; from: string; to: string }) {
  const diff = useLoad(async () => {
    const [a, b] = await Promise.all([versionFiles(name, from), versionFiles(name, to)]);
    const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
    return paths
      .map((path) => ({ path, lines: lineDiff(a.get(path) ?? "", b.get(path) ?? ""), added: !a.has(path), removed: !b.has(path) }))
      .filter((f) => f.lines.some((l) => l.op !== " "));
  }, [name, from, to]);
  return <Loading state={diff}>{(files) => <DiffView files={files} empty={`${from} and ${to} have the same files.`} />}</Loading>;
}

export function DiffView({
  files,
  empty,
}: {
  files: { path: string; lines: ReturnType<typeof lineDiff>; added?: boolean; removed?: boolean }[];
  empty: string;
}) {
  if (files.length === 0) return <p class="muted">{empty}</p>;
  return (
    <div aria-label="Diff">
      {files.map((f) => (
        <div key={f.path} class="diff">
          <div class="diff-path">
            {f.path}
            {f.added ? " (added)" : f.removed ? " (removed)" : ""}
          </div>
          <pre tabIndex={0}>
            {f.lines.map((l, i) => (
              <div key={i} class={l.op === "+" ? "add" : l.op === "-" ? "del" : undefined}>
                {l.op} {l.text}
              </div>
            ))}
          </pre>
        </div>
      ))}
    </div>
  );
}
