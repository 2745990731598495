/**
 * Gitea actions for toolchain runs: read a PR, its diff and changed files, read a file, comment,
 * review, merge, create a branch, change files in one commit, open a PR, open an issue. Each call
 * acts with the agent's own token when it has one. An unreachable Gitea is written to the task's
 * history (`gitea_unreachable`), which is how the run's outcome becomes an infrastructure failure.
 */
import { z } from "zod";
import { defineTool, fail, ok, type ToolContext, type ToolResult } from "../../runtime/index.ts";
import { GiteaError, type GiteaClient } from "../gitea/client.ts";
import { giteaFor } from "./gitea-access.ts";
import { addHistory } from "./task-store.ts";
import { withWorkingTask } from "./tool-context.ts";

export const Repo = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "must be owner/name")
  .describe("Repository as owner/name");
const Num = z.number().int().positive().describe("Pull request or issue number");
const MAX_DIFF = 60_000;
const MAX_FILE = 60_000;

const clip = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters not shown)` : text;

/** Runs a Gitea call for the working task: a string answer is the tool's result; a `ToolResult` passes through. */
export function withGitea(ctx: ToolContext, run: (gitea: GiteaClient) => Promise<string | ToolResult>): Promise<ToolResult> {
  return withWorkingTask(ctx, async (t) => {
    const gitea = await giteaFor(ctx.env, ctx.workspaceId, t.config, t.agent, ctx.signal);
    if (!gitea) return fail("gitea_not_configured", "This workspace has no toolchain.gitea_base_url");
    try {
      const out = await run(gitea);
      return typeof out === "string" ? ok(out) : out;
    } catch (err) {
      if (!(err instanceof GiteaError)) throw err;
      if (err.kind === "infrastructure") {
        await addHistory(ctx.env, ctx.workspaceId, t.task.id, "gitea_unreachable", {
          run_id: ctx.runId,
          operation: err.operation,
          error: err.message,
        });
        return fail("gitea_unreachable", `${err.message}. Gitea is not reachable; Beaver records this as an infrastructure failure.`);
      }
      return fail("gitea_error", err.message);
    }
  });
}

const utf8ToBase64 = (text: string) => {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
};
const base64ToUtf8 = (b64: string) => new TextDecoder().decode(Uint8Array.from(atob(b64.replace(/\s/g, "")), (c) => c.charCodeAt(0)));

export const giteaGetPullTool = defineTool({
  name: "gitea_get_pull",
  outward: true,
  description: "Get a pull request: title, state, author, branches, head commit and description.",
  input: z.strictObject({ repo: Repo, number: Num }),
  idempotent: true,
  readOnly: true,
  execute: ({ repo, number }, ctx) =>
    withGitea(ctx, async (g) => {
      const pr = await g.getPull(repo, number);
      return JSON.stringify({
        number: pr.number,
        title: pr.title,
        state: pr.state,
        merged: pr.merged,
        mergeable: pr.mergeable,
        author: pr.user?.login,
        head: { ref: pr.head?.ref, sha: pr.head?.sha },
        base: { ref: pr.base?.ref },
        body: clip(pr.body ?? "", 8_000),
        url: pr.html_url,
      });
    }),
});

export const giteaGetPullDiffTool = defineTool({
  name: "gitea_get_pull_diff",
  outward: true,
  description: "Get the unified diff of a pull request.",
  input: z.strictObject({ repo: Repo, number: Num }),
  idempotent: true,
  readOnly: true,
  execute: ({ repo, number }, ctx) => withGitea(ctx, async (g) => clip(await g.getPullDiff(repo, number), MAX_DIFF)),
});

export const giteaListPullFilesTool = defineTool({
  name: "gitea_list_pull_files",
  outward: true,
  description: "List the files a pull request changes, with their status and line counts.",
  input: z.strictObject({ repo: Repo, number: Num, page: z.number().int().min(1).max(1000).default(1) }),
  idempotent: true,
  readOnly: true,
  execute: ({ repo, number, page }, ctx) =>
    withGitea(ctx, async (g) => {
      const files = await g.listPullFiles(repo, number, page);
      return JSON.stringify(files.map((f) => ({ filename: f.filename, status: f.status, additions: f.additions, deletions: f.deletions })));
    }),
});

export const giteaReadFileTool = defineTool({
  name: "gitea_read_file",
  outward: true,
  description: "Read a file of a repository at a branch, tag or commit (default: the default branch).",
  input: z.strictObject({ repo: Repo, path: z.string().min(1).max(1000), ref: z.string().min(1).max(250).optional() }),
  idempotent: true,
  readOnly: true,
  execute: ({ repo, path, ref }, ctx) =>
    withGitea(ctx, async (g) => {
      const file = await g.getContents(repo, path, ref);
      if (Array.isArray(file) || file.type !== "file" || typeof file.content !== "string")
        return `${path} is not a file (type ${Array.isArray(file) ? "dir" : file.type})`;
      return clip(file.encoding === "base64" ? base64ToUtf8(file.content) : file.content, MAX_FILE);
    }),
});

export const giteaCommentTool = defineTool({
  name: "gitea_comment",
  outward: true,
  description: "Comment on an issue or pull request (use @name to address someone).",
  input: z.strictObject({ repo: Repo, number: Num, body: z.string().trim().min(1).max(60_000) }),
  execute: ({ repo, number, body }, ctx) =>
    withGitea(ctx, async (g) => {
      const c = await g.comment(repo, number, body);
      return `Comment ${c.id} posted on ${repo}#${number}${c.html_url ? ` (${c.html_url})` : ""}.`;
    }),
});

export const giteaSubmitReviewTool = defineTool({
  name: "gitea_submit_review",
  outward: true,
  description: "Submit a review of a pull request: APPROVED, REQUEST_CHANGES or COMMENT, with a body explaining it.",
  input: z.strictObject({
    repo: Repo,
    number: Num,
    event: z.enum(["APPROVED", "REQUEST_CHANGES", "COMMENT"]),
    body: z.string().trim().min(1).max(60_000),
  }),
  execute: ({ repo, number, event, body }, ctx) =>
    withGitea(ctx, async (g) => {
      const review = await g.submitReview(repo, number, { event, body });
      return `Review ${review.id} (${event}) submitted on ${repo}#${number}.`;
    }),
});

export const giteaMergePullTool = defineTool({
  name: "gitea_merge_pull",
  outward: true,
  description: "Merge a pull request.",
  input: z.strictObject({
    repo: Repo,
    number: Num,
    method: z.enum(["merge", "rebase", "rebase-merge", "squash"]).default("merge"),
    message: z.string().max(10_000).optional(),
    delete_branch: z.boolean().optional(),
  }),
  execute: ({ repo, number, method, message, delete_branch }, ctx) =>
    withGitea(ctx, async (g) => {
      await g.merge(repo, number, { method, message, deleteBranch: delete_branch });
      return `Pull request ${repo}#${number} merged (${method}).`;
    }),
});

export const giteaCreateBranchTool = defineTool({
  name: "gitea_create_branch",
  outward: true,
  description: "Create a branch from another branch, tag or commit.",
  input: z.strictObject({ repo: Repo, name: z.string().min(1).max(250), from: z.string().min(1).max(250) }),
  execute: ({ repo, name, from }, ctx) =>
    withGitea(ctx, async (g) => {
      await g.createBranch(repo, name, from);
      return `Branch ${name} created from ${from} in ${repo}.`;
    }),
});

const FileChangeInput = z.strictObject({
  operation: z.enum(["create", "update", "delete"]),
  path: z.string().min(1).max(1000),
  content: z.string().max(1_000_000).optional().describe("New file content as plain text (create/update)"),
});

export const giteaChangeFilesTool = defineTool({
  name: "gitea_change_files",
  outward: true,
  description:
    "Create, update and delete files in one commit on a branch (optionally starting a new branch from it). Content is plain text; Beaver encodes it and looks up the current file versions.",
  input: z.strictObject({
    repo: Repo,
    branch: z.string().min(1).max(250),
    new_branch: z.string().min(1).max(250).optional(),
    message: z.string().trim().min(1).max(10_000),
    files: z.array(FileChangeInput).min(1).max(100),
  }),
  execute: ({ repo, branch, new_branch, message, files }, ctx) =>
    withGitea(ctx, async (g) => {
      const ops = [];
      for (const f of files) {
        if (f.operation !== "delete" && f.content === undefined)
          throw new GiteaError("business", null, "gitea_change_files", `${f.path}: content is required to ${f.operation} a file`);
        // Gitea wants the current blob sha of a file it updates or deletes.
        const current = f.operation === "create" ? null : await g.getContents(repo, f.path, branch);
        const sha = current && !Array.isArray(current) ? current.sha : undefined;
        ops.push({
          operation: f.operation,
          path: f.path,
          ...(f.content !== undefined ? { content: utf8ToBase64(f.content) } : {}),
          ...(sha ? { sha } : {}),
        });
      }
      const res = await g.changeFiles(repo, { branch, newBranch: new_branch, message, files: ops });
      return `Committed ${files.length} file change(s) to ${new_branch ?? branch} in ${repo}${res.commit?.sha ? ` as ${res.commit.sha}` : ""}.`;
    }),
});

export const giteaCreatePullTool = defineTool({
  name: "gitea_create_pull",
  outward: true,
  description: "Open a pull request from a head branch into a base branch.",
  input: z.strictObject({
    repo: Repo,
    title: z.string().trim().min(1).max(250),
    head: z.string().min(1).max(250),
    base: z.string().min(1).max(250),
    body: z.string().max(60_000).optional(),
  }),
  execute: ({ repo, title, head, base, body }, ctx) =>
    withGitea(ctx, async (g) => {
      const pr = await g.createPull(repo, { title, head, base, body });
      return `Pull request ${repo}#${pr.number} opened${pr.html_url ? ` (${pr.html_url})` : ""}.`;
    }),
});

export const giteaCreateIssueTool = defineTool({
  name: "gitea_create_issue",
  outward: true,
  description: "Open an issue, optionally assigned to Gitea users.",
  input: z.strictObject({
    repo: Repo,
    title: z.string().trim().min(1).max(250),
    body: z.string().max(60_000).optional(),
    assignees: z.array(z.string().min(1).max(40)).max(10).optional(),
  }),
  execute: ({ repo, title, body, assignees }, ctx) =>
    withGitea(ctx, async (g) => {
      const issue = await g.createIssue(repo, { title, body, assignees });
      return `Issue ${repo}#${issue.number} opened${issue.html_url ? ` (${issue.html_url})` : ""}.`;
    }),
});

export const giteaTools = [
  giteaGetPullTool,
  giteaGetPullDiffTool,
  giteaListPullFilesTool,
  giteaReadFileTool,
  giteaCommentTool,
  giteaSubmitReviewTool,
  giteaMergePullTool,
  giteaCreateBranchTool,
  giteaChangeFilesTool,
  giteaCreatePullTool,
  giteaCreateIssueTool,
];
