/**
 * What `git status`, `git diff` and `git log` print, in git's own formats (docs/workspace.md, "Git"),
 * from isomorphic-git's data: the status matrix, blob bytes, commit objects. Pure: data in, text out.
 */
import type { ReadCommitResult } from "isomorphic-git";
import { unifiedDiff } from "../../kernel/unified-diff.ts";

/** isomorphic-git's status row: [path, HEAD 0|1, workdir 0|1|2, stage 0|1|2|3]. */
export type StatusRow = [string, number, number, number];

/** The two status letters `git status --short` prints (index, working tree), or null for an unchanged file. */
function letters([, h, w, s]: StatusRow): [string, string] | null {
  if (h === 0 && s === 0) return w === 0 ? null : ["?", "?"];
  const x = h === 0 ? "A" : s === 0 ? "D" : s === 1 ? " " : "M";
  const y = s === 0 ? " " : w === 0 ? "D" : s === 1 ? (w === 1 ? " " : "M") : s === 3 ? "M" : " ";
  return x === " " && y === " " ? null : [x, y];
}

export function shortStatus(rows: readonly StatusRow[], branch?: string | void): string {
  const out: string[] = branch !== undefined ? [`## ${branch ?? "HEAD (no branch)"}`] : [];
  const untracked: string[] = [];
  for (const row of rows) {
    const l = letters(row);
    if (l?.[0] === "?") untracked.push(`?? ${row[0]}`);
    else if (l) out.push(`${l[0]}${l[1]} ${row[0]}`);
    // Deleted from the index but still in the working tree: also untracked, as git shows it.
    if (row[1] === 1 && row[3] === 0 && row[2] !== 0) untracked.push(`?? ${row[0]}`);
  }
  // Tracked changes first, then untracked files, as git prints them.
  out.push(...untracked);
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

const WORD: Record<string, string> = { A: "new file", M: "modified", D: "deleted" };

export function formatStatus(rows: readonly StatusRow[], branch: string | null, forCommit = false): string {
  const staged: string[] = [];
  const unstaged: string[] = [];
  const untracked: string[] = [];
  for (const row of rows) {
    const l = letters(row);
    if (row[1] === 1 && row[3] === 0 && row[2] !== 0) untracked.push(row[0]);
    if (!l) continue;
    if (l[0] === "?") {
      untracked.push(row[0]);
      continue;
    }
    if (l[0] !== " ") staged.push(`\t${`${WORD[l[0]]}:`.padEnd(12)}${row[0]}`);
    if (l[1] !== " ") unstaged.push(`\t${`${WORD[l[1]]}:`.padEnd(12)}${row[0]}`);
  }
  const out = [branch ? `On branch ${branch}` : "HEAD detached"];
  if (staged.length > 0) out.push("Changes to be committed:", '  (use "git restore --staged <file>..." to unstage)', ...staged, "");
  if (unstaged.length > 0)
    out.push("Changes not staged for commit:", '  (use "git add <file>..." to update what will be committed)', ...unstaged, "");
  if (untracked.length > 0)
    out.push("Untracked files:", '  (use "git add <file>..." to include in what will be committed)', ...untracked.map((p) => `\t${p}`), "");
  if (staged.length === 0) {
    if (unstaged.length > 0 || untracked.length > 0)
      out.push(
        forCommit || unstaged.length > 0
          ? 'no changes added to commit (use "git add" and/or "git commit -a")'
          : 'nothing added to commit but untracked files present (use "git add" to track)',
      );
    else out.push("nothing to commit, working tree clean");
  }
  return `${out.join("\n")}\n`;
}

const decoder = new TextDecoder();

function binary(bytes: Uint8Array | null): boolean {
  if (!bytes) return false;
  const n = Math.min(bytes.byteLength, 8000);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

export interface DiffFile {
  path: string;
  /** null: the file did not exist on that side. */
  before: Uint8Array | null;
  after: Uint8Array | null;
}

export function formatDiff(files: readonly DiffFile[], mode: "patch" | "stat" | "name-only" | "name-status"): string {
  const changed = files.filter(
    (f) => !(f.before && f.after && f.before.byteLength === f.after.byteLength && f.before.every((b, i) => b === f.after![i])),
  );
  if (mode === "name-only") return changed.map((f) => `${f.path}\n`).join("");
  if (mode === "name-status") return changed.map((f) => `${f.before ? (f.after ? "M" : "D") : "A"}\t${f.path}\n`).join("");
  const out: string[] = [];
  let added = 0;
  let removed = 0;
  for (const f of changed) {
    const bin = binary(f.before) || binary(f.after);
    const patch = bin
      ? ""
      : unifiedDiff(f.before ? decoder.decode(f.before) : "", f.after ? decoder.decode(f.after) : "", f.path, {
          from: f.before ? `a/${f.path}` : "/dev/null",
          to: f.after ? `b/${f.path}` : "/dev/null",
        });
    const lines = patch.split("\n");
    const plus = lines.filter((l) => l.startsWith("+") && !l.startsWith("+++")).length;
    const minus = lines.filter((l) => l.startsWith("-") && !l.startsWith("---")).length;
    added += plus;
    removed += minus;
    if (mode === "stat") {
      out.push(` ${f.path} | ${bin ? "Bin" : `${plus + minus} ${"+".repeat(Math.min(plus, 40))}${"-".repeat(Math.min(minus, 40))}`}`);
      continue;
    }
    out.push(`diff --git a/${f.path} b/${f.path}`);
    if (!f.before) out.push("new file mode 100644");
    if (!f.after) out.push("deleted file mode 100644");
    if (bin) out.push(`Binary files ${f.before ? `a/${f.path}` : "/dev/null"} and ${f.after ? `b/${f.path}` : "/dev/null"} differ`);
    else if (patch !== "") out.push(patch.replace(/\n$/, ""));
  }
  if (mode === "stat" && changed.length > 0)
    out.push(
      ` ${changed.length} file${changed.length === 1 ? "" : "s"} changed, ${added} insertion${added === 1 ? "" : "s"}(+), ${removed} deletion${removed === 1 ? "" : "s"}(-)`,
    );
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

function gitDate(seconds: number, offsetMinutes: number): string {
  // isomorphic-git's timezoneOffset is minutes *behind* UTC (as Date#getTimezoneOffset).
  const d = new Date((seconds - offsetMinutes * 60) * 1000);
  const sign = offsetMinutes <= 0 ? "+" : "-";
  const abs = Math.abs(offsetMinutes);
  const tz = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}${String(abs % 60).padStart(2, "0")}`;
  const [wd, day, mon, year, time] = d.toUTCString().replace(",", "").split(" ").filter(Boolean) as [
    string,
    string,
    string,
    string,
    string,
  ];
  return `${wd} ${mon} ${Number(day)} ${time} ${year} ${tz}`;
}

export function formatLog(commits: readonly ReadCommitResult[], oneline: boolean): string {
  if (oneline) return commits.map((c) => `${c.oid.slice(0, 7)} ${c.commit.message.split("\n")[0]}\n`).join("");
  return commits
    .map((c) => {
      const a = c.commit.author;
      const body = c.commit.message
        .replace(/\n+$/, "")
        .split("\n")
        .map((l) => `    ${l}`.trimEnd());
      return [
        `commit ${c.oid}`,
        `Author: ${a.name} <${a.email}>`,
        `Date:   ${gitDate(a.timestamp, a.timezoneOffset)}`,
        "",
        ...body,
        "",
      ].join("\n");
    })
    .join("\n");
}
