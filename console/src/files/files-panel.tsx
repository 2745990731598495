/**
 * The session view's Files panel (docs/workspace.md, "Console"; docs/console.md): the session
 * workspace's tree at the active leaf or at a chosen file-changing event, one file's content with line
 * numbers (binary files and the part beyond 256 KiB are offered as a download of the raw route), and
 * the file's diff against a base tree — by default the tree the session's `git clone` left, else its
 * first workspace tree (base.ts), or any other file-changing event the reader picks. Folded away under
 * the header like "Branches and runs", so a session without files costs nothing until it is opened.
 */
import { useMemo, useState } from "preact/hooks";
import { api, authHeaders, readResponse, urlOf } from "../api/client";
import type { Schemas } from "../api/openapi";
import { ErrorNote, Loading, useAction, useLoad } from "../ui";
import { defaultBase, isCloneCall } from "./base";
import { buildTree, compareListings, type DirNode, type FileRow } from "./tree";
import { VIEW_MAX_BYTES, diffRows, looksBinary, readHead } from "./content";

type Change = Schemas["WorkspaceFileChanges"]["changes"][number];

/** No diff base (the tree is shown without comparison). */
const NO_BASE = "none";

export function FilesPanel({ sessionId, tick }: { sessionId: string; tick: number }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="session-details files-details" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Files</summary>
      {open ? <FilesBody sessionId={sessionId} tick={tick} /> : null}
    </details>
  );
}

const changeLabel = (c: Change) =>
  `#${c.seq} ${c.tool_name}${c.command ? `: ${c.command.length > 60 ? `${c.command.slice(0, 59)}…` : c.command}` : ""}${isCloneCall(c) ? " (clone)" : ""}`;

function FilesBody({ sessionId, tick }: { sessionId: string; tick: number }) {
  const changes = useLoad(() => api("get", "/api/sessions/{id}/file-changes", { params: { id: sessionId } }), [sessionId, tick]);
  /** The event whose tree is shown ("" = the active leaf). */
  const [at, setAt] = useState("");
  /** The chosen base (undefined = the default one). */
  const [chosenBase, setChosenBase] = useState<string | undefined>(undefined);
  const [selected, setSelected] = useState<string | null>(null);
  const [changedOnly, setChangedOnly] = useState(false);
  const list = changes.data?.changes ?? [];
  const base = chosenBase ?? defaultBase(list) ?? NO_BASE;
  const baseId = base === NO_BASE ? null : base;

  const shown = useLoad(
    () => api("get", "/api/sessions/{id}/files", { params: { id: sessionId }, query: at ? { event: at } : {} }),
    [sessionId, tick, at],
  );
  const baseListing = useLoad(
    async () => (baseId ? api("get", "/api/sessions/{id}/files", { params: { id: sessionId }, query: { event: baseId } }) : null),
    [sessionId, baseId],
  );
  // The base's files once the listing for *this* base is in (useLoad keeps the last one while loading).
  const baseFiles = baseId && baseListing.data?.event_id === baseId ? baseListing.data.files : null;
  const comparing = baseId !== null && baseFiles === null;
  const rows = useMemo(() => (shown.data ? compareListings(shown.data.files, baseFiles) : []), [shown.data, baseFiles]);
  const tree = useMemo(() => buildTree(changedOnly ? rows.filter((r) => r.status !== "same") : rows), [rows, changedOnly]);
  const row = rows.find((r) => r.path === selected) ?? null;
  const treeAt = at || null;

  return (
    <div class="files-panel" data-testid="files-panel">
      <ErrorNote error={changes.error} />
      <div class="files-controls row">
        <label>
          Tree at{" "}
          <select value={at} onChange={(e) => setAt(e.currentTarget.value)} data-testid="files-at">
            <option value="">the active leaf</option>
            {list.map((c) => (
              <option key={c.event_id} value={c.event_id}>
                {changeLabel(c)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Diff base{" "}
          <select value={base} onChange={(e) => setChosenBase(e.currentTarget.value)} data-testid="files-base">
            <option value={NO_BASE}>none</option>
            {list.map((c) => (
              <option key={c.event_id} value={c.event_id}>
                {changeLabel(c)}
              </option>
            ))}
          </select>
        </label>
        <label class="row">
          <input type="checkbox" checked={changedOnly} onChange={(e) => setChangedOnly(e.currentTarget.checked)} /> changed only
        </label>
        <DownloadButton
          url={urlOf("/api/sessions/{id}/files.tar.gz", { id: sessionId }, { event: treeAt ?? undefined })}
          filename="workspace.tar.gz"
          label="Download .tar.gz"
        />
      </div>
      <Loading state={shown}>
        {(listing) => (
          <div class="files-split">
            <nav class="files-tree" aria-label="Workspace files">
              <p class="muted small" data-testid="files-summary">
                {listing.file_count} file{listing.file_count === 1 ? "" : "s"}, {formatBytes(listing.total_bytes)}
                {baseId ? (comparing ? " · comparing with the base…" : ` · ${tree.changed} changed against the base`) : ""}
                {listing.truncated ? " · only the first 5,000 are listed" : ""}
              </p>
              {rows.length === 0 ? (
                <p class="muted small">No files {treeAt ? "at this event" : "yet"}.</p>
              ) : (
                <DirList dir={tree} selected={selected} onSelect={setSelected} />
              )}
            </nav>
            <section class="file-view" aria-label="File">
              {row ? (
                <FileView key={`${row.path}@${treeAt}@${baseId}`} sessionId={sessionId} row={row} at={treeAt} baseId={baseId} />
              ) : (
                <p class="muted small">{selected ? `'${selected}' is not in this tree.` : "Pick a file to see it."}</p>
              )}
            </section>
          </div>
        )}
      </Loading>
    </div>
  );
}

const STATUS_LABEL: Record<FileRow["status"], string | null> = { added: "added", modified: "modified", deleted: "deleted", same: null };

function DirList({ dir, selected, onSelect }: { dir: DirNode; selected: string | null; onSelect: (path: string) => void }) {
  return (
    <ul class="files-dir">
      {dir.dirs.map((d) => (
        <li key={d.path}>
          <details open>
            <summary>
              {d.name}/{d.changed > 0 ? <span class="badge">{d.changed} changed</span> : null}
            </summary>
            <DirList dir={d} selected={selected} onSelect={onSelect} />
          </details>
        </li>
      ))}
      {dir.files.map((f) => {
        const status = STATUS_LABEL[f.status];
        return (
          <li key={f.path} class={`file-row status-${f.status}`}>
            <button
              type="button"
              class="link"
              aria-current={selected === f.path ? "true" : undefined}
              onClick={() => onSelect(f.path)}
              data-path={f.path}
            >
              {f.path.split("/").at(-1)}
            </button>
            {status ? <span class={`badge file-${f.status}`}>{status}</span> : null}
            <span class="muted small"> {formatBytes(f.size)}</span>
          </li>
        );
      })}
    </ul>
  );
}

interface Loaded {
  bytes: Uint8Array;
  truncated: boolean;
}

/** One file's first 256 KiB at an event (null: the file is not in that tree). */
async function loadFile(sessionId: string, path: string, event: string | null): Promise<Loaded> {
  const res = await fetch(urlOf("/api/sessions/{id}/files/{path}", { id: sessionId, path }, { event: event ?? undefined }), {
    headers: authHeaders(),
  });
  if (!res.ok) await readResponse(res);
  return readHead(res.body);
}

function FileView({ sessionId, row, at, baseId }: { sessionId: string; row: FileRow; at: string | null; baseId: string | null }) {
  const [tab, setTab] = useState<"content" | "diff">(row.status === "same" || !baseId ? "content" : "diff");
  const current = useLoad(
    async () => (row.status === "deleted" ? null : loadFile(sessionId, row.path, at)),
    [sessionId, row.path, at, row.sha256],
  );
  const before = useLoad(
    async () => (tab === "diff" && baseId && row.status !== "added" ? loadFile(sessionId, row.path, baseId) : null),
    [sessionId, row.path, baseId, tab],
  );
  const rawUrl = urlOf(
    "/api/sessions/{id}/files/{path}",
    { id: sessionId, path: row.path },
    { event: (row.status === "deleted" ? baseId : at) ?? undefined },
  );
  const name = row.path.split("/").at(-1) ?? "file";
  return (
    <div>
      <div class="row spread">
        <h4 class="mono file-path" data-testid="file-path">
          {row.path}
        </h4>
        <DownloadButton url={rawUrl} filename={name} label="Download" />
      </div>
      <div class="tabs" role="tablist" aria-label="File view">
        <button
          type="button"
          role="tab"
          aria-selected={tab === "content"}
          class={tab === "content" ? "active" : ""}
          onClick={() => setTab("content")}
        >
          Content
        </button>
        <button
          type="button"
          role="tab"
          aria-selected={tab === "diff"}
          class={tab === "diff" ? "active" : ""}
          onClick={() => setTab("diff")}
        >
          Diff against the base
        </button>
      </div>
      <div role="tabpanel">
        {tab === "content" ? (
          row.status === "deleted" ? (
            <p class="muted small">Deleted since the base; the diff shows what it held.</p>
          ) : (
            <Loading state={current}>{(file) => (file ? <Content file={file} size={row.size} /> : null)}</Loading>
          )
        ) : !baseId ? (
          <p class="muted small">Pick a diff base above to compare this file with.</p>
        ) : row.status === "same" ? (
          <p class="muted small" data-testid="diff-same">
            No changes against the base.
          </p>
        ) : (
          <Loading state={current}>
            {(after) => <Loading state={before}>{(prior) => <Diff before={prior} after={after} size={row.size} />}</Loading>}
          </Loading>
        )}
      </div>
    </div>
  );
}

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function Content({ file, size }: { file: Loaded; size: number }) {
  if (looksBinary(file.bytes)) return <p class="muted small">Binary file, {formatBytes(size)}: use Download to get it.</p>;
  const lines = decode(file.bytes).split("\n");
  if (lines.at(-1) === "") lines.pop();
  return (
    <>
      {file.truncated ? (
        <p class="note small" data-testid="file-truncated">
          Showing the first {formatBytes(VIEW_MAX_BYTES)} of {formatBytes(size)}; Download has the whole file.
        </p>
      ) : null}
      <pre class="code" tabIndex={0} aria-label="File content" data-testid="file-content">
        {lines.map((line, i) => (
          <div key={i}>
            <span class="ln" aria-hidden="true">
              {i + 1}
            </span>
            {line}
          </div>
        ))}
      </pre>
    </>
  );
}

function Diff({ before, after, size }: { before: Loaded | null; after: Loaded | null; size: number }) {
  const sides = [before, after].filter((s): s is Loaded => s !== null);
  if (sides.some((s) => looksBinary(s.bytes))) return <p class="muted small">Binary files differ.</p>;
  if (sides.some((s) => s.truncated))
    return <p class="muted small">Too large to diff here ({formatBytes(size)}); Download has the whole file.</p>;
  const rows = diffRows(before ? decode(before.bytes) : "", after ? decode(after.bytes) : "");
  if (!rows) return <p class="muted small">Too many differences to show.</p>;
  return (
    <pre class="code diff-view" tabIndex={0} aria-label="Diff against the base" data-testid="file-diff">
      {rows.map((r, i) =>
        r.kind === "hunk" ? (
          <div key={i} class="hunk">
            {r.header}
          </div>
        ) : (
          <div key={i} class={r.op === "+" ? "add" : r.op === "-" ? "del" : ""}>
            <span class="ln" aria-hidden="true">
              {r.old ?? ""}
            </span>
            <span class="ln" aria-hidden="true">
              {r.new ?? ""}
            </span>
            <span class="op">{r.op}</span>
            {r.text}
          </div>
        ),
      )}
    </pre>
  );
}

/** Fetches with the bearer token (a plain link cannot send it) and saves the answer as a file. */
function DownloadButton({ url, filename, label }: { url: string; filename: string; label: string }) {
  const action = useAction();
  return (
    <span>
      <button
        type="button"
        class="secondary small"
        disabled={action.busy}
        onClick={() =>
          action.run(async () => {
            const res = await fetch(url, { headers: authHeaders() });
            if (!res.ok) await readResponse(res);
            const href = URL.createObjectURL(await res.blob());
            const a = document.createElement("a");
            a.href = href;
            a.download = filename;
            a.click();
            setTimeout(() => URL.revokeObjectURL(href), 10_000);
          })
        }
      >
        {label}
      </button>
      <ErrorNote error={action.error} />
    </span>
  );
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
