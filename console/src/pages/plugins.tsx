/**
 * The Plugins tab (docs/skills-and-plugins.md, "Plugins"): uploaded packages and Gitea sources, each
 * plugin's state and skills with enable / pause / resume / disable / adopt, sync, and per skill the
 * learning candidates (classification, merge plan) and drafts (`GET /api/skills/{name}/candidates`).
 * It is the Plugins tab of the Skills area (skills-area.tsx); the drafts list and a draft's review page
 * (diffs, reports, evaluation, approve / reject / regenerate; docs/learning.md) are the Drafts tab (./drafts.tsx).
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import { Empty, ErrorNote, Json, Link, Loading, Status, Time, useAction, useLoad } from "../ui";
import { VersionDiff } from "./skills";

interface PluginSkill {
  name: string;
  status: string;
  linked: boolean;
  skill_status: string | null;
  current_beaver_version: string | null;
  accepted_beaver_version: string | null;
  pending_candidate_id: string | null;
}
interface Plugin {
  id: string;
  state: string;
  enabled: boolean;
  updates_paused: boolean;
  package_status: string;
  installed_version: string | null;
  discovered_version: string | null;
  errors: { path: string; field?: string; message: string }[];
  skills: PluginSkill[];
}
interface Source {
  id: string;
  owner: string;
  repo: string;
  ref: string;
  last_fetched_at: number | null;
  last_commit: string | null;
  last_status: string | null;
  last_error: string | null;
}
interface Candidate {
  id: string;
  kind: string;
  status: string;
  merge_mode: string;
  plugin_id: string | null;
  evidence: unknown;
  merge_plan: {
    skill_md?: string;
    conflicts?: { path: string; kind: string }[];
    blocked?: boolean;
    files?: { path: string; resolution: string }[];
  } | null;
  draft_id: string | null;
  created_at: number;
}
interface Draft {
  id: string;
  candidate_id: string;
  proposal_kind: string;
  status: string;
  safety_level: string;
  published_version: string | null;
  created_at: number;
}

export function PluginsPage() {
  const [tick, setTick] = useState(0);
  const changed = () => setTick((t) => t + 1);
  const plugins = useLoad(async () => (await api("get", "/api/plugins")).plugins as unknown as Plugin[], [tick]);
  const sources = useLoad(async () => (await api("get", "/api/plugins/sources")).sources as unknown as Source[], [tick]);
  const action = useAction();
  const [syncResult, setSyncResult] = useState<unknown>(null);
  return (
    <section class="panel" aria-label="Plugins">
      <div class="row spread">
        <h2>Plugins</h2>
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              setSyncResult(await api("post", "/api/plugins/sync", { body: {} }));
              changed();
            })
          }
        >
          Sync now
        </button>
      </div>
      <ErrorNote error={action.error} />
      {syncResult ? (
        <details>
          <summary>Last sync</summary>
          <Json value={syncResult} />
        </details>
      ) : null}
      <PackageUpload onDone={changed} />
      <Loading state={plugins}>
        {(list) =>
          list.length === 0 ? (
            <Empty>No plugins yet: upload a package or add a Gitea source.</Empty>
          ) : (
            <div class="cards">
              {list.map((p) => (
                <PluginCard key={p.id} plugin={p} onChanged={changed} />
              ))}
            </div>
          )
        }
      </Loading>
      <h3>Gitea sources</h3>
      <Loading state={sources}>
        {(list) =>
          list.length === 0 ? (
            <Empty>No Gitea source yet: add one below.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>id</th>
                  <th>repository</th>
                  <th>last fetch</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                {list.map((s) => (
                  <SourceRow key={s.id} source={s} onChanged={changed} />
                ))}
              </tbody>
            </table>
          )
        }
      </Loading>
      <SourceForm onDone={changed} />
    </section>
  );
}

function PackageUpload({ onDone }: { onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const action = useAction();
  return (
    <form
      class="row"
      aria-label="Upload a plugin package"
      onSubmit={(e) => {
        e.preventDefault();
        if (!file) return;
        void action.run(async () => {
          await api("put", "/api/plugins/packages", {
            raw: await file.arrayBuffer(),
            contentType: file.name.endsWith(".zip") ? "application/zip" : "application/gzip",
          });
          onDone();
        });
      }}
    >
      <label for="plugin-package">Plugin package (.tar.gz or .zip)</label>
      <input id="plugin-package" type="file" accept=".tar.gz,.tgz,.zip" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
      <button type="submit" disabled={!file || action.busy}>
        Upload package
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}

function PluginCard({ plugin: p, onChanged }: { plugin: Plugin; onChanged: () => void }) {
  const action = useAction();
  const act = (path: "/api/plugins/{id}/enable" | "/api/plugins/{id}/pause" | "/api/plugins/{id}/resume") =>
    action.run(async () => (await api("post", path, { params: { id: p.id } }), onChanged()));
  return (
    <article class="card" aria-label={`Plugin ${p.id}`} data-testid={`plugin-${p.id}`}>
      <h3>
        {p.id} <Status value={p.state} />
      </h3>
      <p class="small">
        package: {p.package_status} · installed {p.installed_version ?? "—"} · discovered {p.discovered_version ?? "—"}
        {p.updates_paused ? " · updates paused" : ""}
      </p>
      <div class="row">
        {!p.enabled ? (
          <button type="button" disabled={action.busy} onClick={() => act("/api/plugins/{id}/enable")}>
            Enable {p.id}
          </button>
        ) : (
          <>
            {p.updates_paused ? (
              <button type="button" disabled={action.busy} onClick={() => act("/api/plugins/{id}/resume")}>
                Resume updates
              </button>
            ) : (
              <button type="button" disabled={action.busy} onClick={() => act("/api/plugins/{id}/pause")}>
                Pause updates
              </button>
            )}
            <button
              type="button"
              class="danger"
              disabled={action.busy}
              onClick={() => {
                if (confirm(`Disable ${p.id} and its linked skills?`))
                  void action.run(
                    async () => (
                      await api("post", "/api/plugins/{id}/disable", { params: { id: p.id }, body: { disable_linked_skills: true } }),
                      onChanged()
                    ),
                  );
              }}
            >
              Disable
            </button>
          </>
        )}
      </div>
      <ErrorNote error={action.error} />
      {p.errors.length > 0 ? <Json value={p.errors} /> : null}
      <table>
        <thead>
          <tr>
            <th>skill</th>
            <th>state</th>
            <th>version</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {p.skills.map((s) => (
            <PluginSkillRow key={s.name} plugin={p} skill={s} onChanged={onChanged} />
          ))}
        </tbody>
      </table>
    </article>
  );
}

function PluginSkillRow({ plugin, skill, onChanged }: { plugin: Plugin; skill: PluginSkill; onChanged: () => void }) {
  const action = useAction();
  // Open by default while a candidate waits; the reader's own choice wins once made.
  const [chosen, setOpen] = useState<boolean | null>(null);
  const open = chosen ?? skill.pending_candidate_id !== null;
  return (
    <>
      <tr>
        <td>
          <Link href={`/skills/${encodeURIComponent(skill.name)}`}>{skill.name}</Link>
        </td>
        <td>
          <Status value={skill.status} /> {skill.pending_candidate_id ? <span class="badge warn">candidate</span> : null}
        </td>
        <td class="mono">{skill.current_beaver_version ?? "—"}</td>
        <td>
          <button type="button" class="small link" onClick={() => setOpen(!open)} aria-expanded={open}>
            Candidates and drafts
          </button>
          {skill.linked ? (
            <button
              type="button"
              class="small"
              disabled={action.busy}
              onClick={() =>
                action.run(
                  async () => (
                    await api("post", "/api/plugins/{id}/skills/{skill}/adopt", { params: { id: plugin.id, skill: skill.name } }),
                    onChanged()
                  ),
                )
              }
            >
              Adopt
            </button>
          ) : null}
          <ErrorNote error={action.error} />
        </td>
      </tr>
      {open ? (
        <tr>
          <td colSpan={4}>
            <Candidates key={skill.pending_candidate_id ?? "none"} name={skill.name} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

function Candidates({ name }: { name: string }) {
  const data = useLoad(
    async () =>
      (await api("get", "/api/skills/{name}/candidates", { params: { name } })) as unknown as { candidates: Candidate[]; drafts: Draft[] },
    [name],
  );
  return (
    <Loading state={data}>
      {(d) => (
        <div class="candidates" data-testid={`candidates-${name}`}>
          {d.candidates.length === 0 ? <Empty>No candidates.</Empty> : null}
          {d.candidates.map((c) => (
            <div key={c.id} class="card" data-testid="candidate">
              <div>
                <strong>{c.kind}</strong> · <span data-testid="merge-mode">{c.merge_mode}</span> · <Status value={c.status} /> ·{" "}
                <Time ts={c.created_at} />
              </div>
              {c.merge_plan ? (
                <details>
                  <summary>
                    Merge plan{c.merge_plan.blocked ? " (blocked)" : ""}: {c.merge_plan.conflicts?.length ?? 0} conflicts
                  </summary>
                  <ul class="small">
                    {(c.merge_plan.files ?? []).map((f) => (
                      <li key={f.path}>
                        {f.path}: {f.resolution}
                      </li>
                    ))}
                  </ul>
                  {c.merge_plan.skill_md ? (
                    <details>
                      <summary>Merged SKILL.md</summary>
                      <Json value={c.merge_plan.skill_md} />
                    </details>
                  ) : null}
                </details>
              ) : null}
              <details>
                <summary>Evidence</summary>
                <Json value={c.evidence} />
              </details>
            </div>
          ))}
          {d.drafts.length > 0 ? <h4>Drafts</h4> : null}
          {d.drafts.map((dr) => (
            <div key={dr.id} class="card">
              <Link href={`/skills/~drafts/${encodeURIComponent(dr.id)}`}>{dr.proposal_kind}</Link> · <Status value={dr.status} /> · safety{" "}
              {dr.safety_level}
              {dr.published_version ? (
                <>
                  {" "}
                  · published as <Link href={`/skills/${encodeURIComponent(name)}`}>{dr.published_version}</Link>
                  {previousVersion(dr.published_version) ? (
                    <details>
                      <summary>
                        Diff {previousVersion(dr.published_version)} → {dr.published_version}
                      </summary>
                      <VersionDiff name={name} from={previousVersion(dr.published_version)!} to={dr.published_version} />
                    </details>
                  ) : null}
                </>
              ) : (
                <span class="muted small"> · not published yet: open it to review its diffs, evaluate and decide</span>
              )}
            </div>
          ))}
        </div>
      )}
    </Loading>
  );
}

/** The version label before `label` (v0003 → v0002), or null for the first. */
function previousVersion(label: string): string | null {
  const n = Number(label.slice(1));
  return n > 1 ? `v${String(n - 1).padStart(label.length - 1, "0")}` : null;
}

function SourceRow({ source: s, onChanged }: { source: Source; onChanged: () => void }) {
  const action = useAction();
  return (
    <tr>
      <td>{s.id}</td>
      <td>
        {s.owner}/{s.repo}@{s.ref}
      </td>
      <td>
        <Time ts={s.last_fetched_at} /> {s.last_status ?? ""} {s.last_error ? <span class="error small">{s.last_error}</span> : null}
      </td>
      <td>
        <button
          type="button"
          class="small"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => (await api("post", "/api/plugins/sources/{id}/fetch", { params: { id: s.id } }), onChanged()))
          }
        >
          Fetch
        </button>
        <button
          type="button"
          class="small danger"
          disabled={action.busy}
          onClick={() => action.run(async () => (await api("delete", "/api/plugins/sources/{id}", { params: { id: s.id } }), onChanged()))}
        >
          Remove
        </button>
        <ErrorNote error={action.error} />
      </td>
    </tr>
  );
}

function SourceForm({ onDone }: { onDone: () => void }) {
  const [f, setF] = useState({ id: "", owner: "", repo: "", ref: "main" });
  const action = useAction();
  const field = (k: keyof typeof f, label: string) => (
    <>
      <label for={`src-${k}`}>{label}</label>
      <input id={`src-${k}`} value={f[k]} onInput={(e) => setF({ ...f, [k]: e.currentTarget.value })} required />
    </>
  );
  return (
    <form
      class="card grid"
      aria-label="Add a Gitea source"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(
          async () => (
            await api("put", "/api/plugins/sources/{id}", { params: { id: f.id }, body: { owner: f.owner, repo: f.repo, ref: f.ref } }),
            onDone()
          ),
        );
      }}
    >
      {field("id", "Source id")}
      {field("owner", "Owner")}
      {field("repo", "Repository")}
      {field("ref", "Ref")}
      <button type="submit" disabled={action.busy}>
        Save source
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}
