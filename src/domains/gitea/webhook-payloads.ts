/**
 * The parts of Gitea's webhook payloads (`modules/structs/hook.go`) that Beaver reads, as zod
 * schemas. They are lenient on purpose: unknown keys are dropped and optional fields may be null,
 * because Gitea versions differ; the fields a scenario cannot work without are required.
 */
import { z } from "zod";

export const UserSchema = z.object({
  id: z.number().optional(),
  login: z.string().optional(),
  username: z.string().optional(),
  full_name: z.string().nullish(),
});
export type GiteaUser = z.infer<typeof UserSchema>;

/** Gitea fills `login` and `username` with the same value; older payloads carry only one of them. */
export function loginOf(user: GiteaUser | null | undefined): string | undefined {
  const name = user?.login || user?.username;
  return name ? name : undefined;
}

export const RepositorySchema = z.object({
  full_name: z.string().regex(/^[^/\s]+\/[^/\s]+$/, "must be owner/name"),
  html_url: z.string().nullish(),
  default_branch: z.string().nullish(),
});

const BranchSchema = z.object({
  ref: z.string(),
  sha: z.string(),
  label: z.string().nullish(),
});

export const PullRequestSchema = z.object({
  number: z.number().int().positive().optional(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string().nullish(),
  state: z.string().nullish(),
  merged: z.boolean().nullish(),
  merged_by: UserSchema.nullish(),
  user: UserSchema.nullish(),
  base: BranchSchema,
  head: BranchSchema,
  requested_reviewers: z.array(UserSchema).nullish(),
  changed_files: z.number().nullish(),
  additions: z.number().nullish(),
  deletions: z.number().nullish(),
});
export type GiteaPullRequest = z.infer<typeof PullRequestSchema>;

export const PullRequestPayloadSchema = z.object({
  action: z.string(),
  number: z.number().int().positive(),
  pull_request: PullRequestSchema,
  requested_reviewer: UserSchema.nullish(),
  repository: RepositorySchema,
  sender: UserSchema.nullish(),
  commit_id: z.string().nullish(),
  review: z.object({ type: z.string(), content: z.string().nullish() }).nullish(),
});

export const IssueSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string().nullish(),
  user: UserSchema.nullish(),
  assignee: UserSchema.nullish(),
  assignees: z.array(UserSchema).nullish(),
  labels: z.array(z.object({ name: z.string() })).nullish(),
  state: z.string().nullish(),
  /** Present (non-null) when the issue is a pull request. */
  pull_request: z.object({ merged: z.boolean().nullish() }).passthrough().nullish(),
});

export const IssuePayloadSchema = z.object({
  action: z.string(),
  number: z.number().int().positive().optional(),
  issue: IssueSchema,
  repository: RepositorySchema,
  sender: UserSchema.nullish(),
});

export const IssueCommentPayloadSchema = z.object({
  action: z.string(),
  issue: IssueSchema,
  comment: z.object({
    id: z.number().optional(),
    html_url: z.string().nullish(),
    body: z.string(),
    user: UserSchema.nullish(),
  }),
  repository: RepositorySchema,
  sender: UserSchema.nullish(),
  is_pull: z.boolean().nullish(),
});

export const CommitStatusPayloadSchema = z.object({
  sha: z.string().min(7),
  state: z.string(),
  context: z.string().nullish(),
  description: z.string().nullish(),
  target_url: z.string().nullish(),
  commit: z.object({ id: z.string().optional(), message: z.string().nullish(), url: z.string().nullish() }).nullish(),
  repository: RepositorySchema,
  sender: UserSchema.nullish(),
});

export const WorkflowJobPayloadSchema = z.object({
  action: z.string(),
  workflow_job: z.object({
    id: z.number(),
    run_id: z.number().nullish(),
    name: z.string(),
    head_sha: z.string(),
    head_branch: z.string().nullish(),
    status: z.string().nullish(),
    conclusion: z.string().nullish(),
    html_url: z.string().nullish(),
    steps: z.array(z.object({ name: z.string(), conclusion: z.string().nullish() })).nullish(),
  }),
  pull_request: PullRequestSchema.nullish(),
  repository: RepositorySchema,
  sender: UserSchema.nullish(),
});

export const WorkflowRunPayloadSchema = z.object({
  action: z.string(),
  workflow: z.object({ name: z.string().nullish(), path: z.string().nullish() }).nullish(),
  workflow_run: z.object({
    id: z.number(),
    display_title: z.string().nullish(),
    head_sha: z.string(),
    head_branch: z.string().nullish(),
    path: z.string().nullish(),
    status: z.string().nullish(),
    conclusion: z.string().nullish(),
    html_url: z.string().nullish(),
    run_number: z.number().nullish(),
  }),
  pull_request: PullRequestSchema.nullish(),
  repository: RepositorySchema,
  sender: UserSchema.nullish(),
});
