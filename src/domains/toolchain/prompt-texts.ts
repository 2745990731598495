/**
 * Every text an agent (or a Gitea reader) sees from the toolchain, kept as data in one module: action
 * hints, step templates per scenario, event descriptions, the hard rules and Red Flags of the
 * constraints section, the reporting section, reminders and failure notices (mail prompts are the mail
 * domain's). Templates use `{name}` placeholders filled by `fill()` (src/domains/tasks/handler.ts). The
 * wording makes each task an action, not a notice, with numbered steps, no self-rationalisation, and
 * the report as the proof of work (docs/toolchain.md, "Dispatch and task runs").
 */

/** Opening line of the context section, per action type: this is work to do, not news to read. */
export const ACTION_HINTS: Record<string, string> = {
  review_request:
    "You have received a review request. This is an action event: you must review the pull request and submit a review — reading it is not enough.",
  review_updated:
    "New commits were pushed to a pull request you review. This is an action event: you must re-review the changes and submit a new review.",
  review_result:
    "You have received the result of a review on your pull request. This is an action event, not a notification: you must act on the result.",
  review_comment:
    "A reviewer commented on your pull request. This is an action event: you must respond to every point (change the code or answer it).",
  ci_failure: "CI failed on your pull request. This is an action event: you must find the cause and fix it.",
  issue_assigned: "An issue was assigned to you. This is an action event: you must implement it and open a pull request.",
  deploy_failure: "A deployment failed. This is an action event: you must investigate, fix and redeploy.",
  mention: "Someone mentioned you and is waiting for you. This is an action event: you must respond to what they ask.",
  review_merged:
    "Your pull request was merged. This is the one toolchain event that needs no action beyond reading it; the task completes on its own.",
  infrastructure_failure:
    "Beaver could not reach Gitea while carrying out toolchain work. This is an action event: you must check the Gitea service and restore it.",
};
export const DEFAULT_ACTION_HINT = "You have received a toolchain event. This is an action event: you must carry out the steps below.";

/** Step templates per scenario variant. The last step of every list is the report. */
export const STEP_TEMPLATES: Record<string, string[]> = {
  review_result_approved: [
    'Merge the pull request {repo}#{number}: call gitea_merge_pull with repo "{repo}" and number {number} (Gitea API: POST /repos/{repo}/pulls/{number}/merge).',
    "Report what you did: call toolchain_report for task {task_id}, naming the merge result.",
  ],
  review_result_changes: [
    'Read the review of {repo}#{number} and the current diff: call gitea_get_pull_diff with repo "{repo}" and number {number} (Gitea API: GET /repos/{repo}/pulls/{number}.diff).',
    "Check out the pull request's branch in your workspace: run `git clone --branch {head_ref} {repo}` with bash, then `cd` into the clone.",
    "Change the code point by point as the review asks: find the places with grep, change them with edit_file (or write_file), and look at the result with `git diff`.",
    'Commit and push to the pull request\'s branch: `git add -A && git commit -m "<what changed>" && git push origin {head_ref}`. The push re-runs CI on {repo}#{number}.',
    "Tell the reviewer the changes are in: call gitea_comment on {repo}#{number} (Gitea API: POST /repos/{repo}/issues/{number}/comments) so the review can be repeated once CI passes.",
    "Report what you did: call toolchain_report for task {task_id}, listing each review point and how you addressed it.",
  ],
  review_request: [
    'Read the changes: call gitea_get_pull_diff with repo "{repo}" and number {number} (Gitea API: GET /repos/{repo}/pulls/{number}.diff) and gitea_list_pull_files (GET /repos/{repo}/pulls/{number}/files).',
    "Review them against the checklist: correctness, tests, error handling, security, readability.",
    'Submit your review: call gitea_submit_review with repo "{repo}", number {number} and event APPROVED or REQUEST_CHANGES (Gitea API: POST /repos/{repo}/pulls/{number}/reviews).',
    "Report what you did: call toolchain_report for task {task_id} with your verdict and its main reasons.",
  ],
  review_updated: [
    'Read the new changes: call gitea_get_pull_diff with repo "{repo}" and number {number} (Gitea API: GET /repos/{repo}/pulls/{number}.diff); the head is now {new_sha}.',
    "Check first that the points of your previous review were addressed, then review what else changed.",
    'Submit a new review: call gitea_submit_review with repo "{repo}", number {number} and event APPROVED or REQUEST_CHANGES (Gitea API: POST /repos/{repo}/pulls/{number}/reviews).',
    "Report what you did: call toolchain_report for task {task_id} with your verdict.",
  ],
  review_comment: [
    'Read the review comment on {repo}#{number} and the code it refers to: call gitea_get_pull_diff with repo "{repo}" and number {number} (Gitea API: GET /repos/{repo}/pulls/{number}.diff).',
    'Respond to every point: answer with gitea_comment (Gitea API: POST /repos/{repo}/issues/{number}/comments), or change the code — `git clone --branch {head_ref} {repo}` with bash, edit_file, then `git add -A && git commit -m "…" && git push origin {head_ref}`.',
    "Report what you did: call toolchain_report for task {task_id}.",
  ],
  ci_failure: [
    "Read the log of the failing check '{check_name}': call gitea_ci_logs with repo \"{repo}\", sha \"{sha}\" and target_url \"{check_url}\" when the check links to a Gitea Actions run (Gitea API: GET /repos/{repo}/actions/runs, then the run's jobs and the failed job's log); find the failing test and its error. If the server has no Actions log API, work from the check's description '{check_description}'.",
    "Check out the pull request's branch: run `git clone --branch {head_ref} {repo}` with bash and `cd` into it; find the cause with grep and read_file.",
    'Fix it with edit_file, check the change with `git diff`, then commit and push to the same branch: `git add -A && git commit -m "<the fix>" && git push origin {head_ref}`.',
    "The push re-runs CI on {repo}#{number}; say on the pull request what you fixed with gitea_comment (Gitea API: POST /repos/{repo}/issues/{number}/comments).",
    "Report what you did: call toolchain_report for task {task_id}, naming the cause and the fix.",
  ],
  issue_assigned: [
    "Clone the repository and create the branch: run `git clone {repo}` with bash, `cd` into the clone, then `git checkout -b {branch}`.",
    "Implement issue #{number} with unit tests: find the code with grep and read_file, change it with edit_file, add test files with write_file, and review everything with `git status` and `git diff`.",
    'Commit and push the branch: `git add -A && git commit -m "<summary> (#{number})" && git push origin {branch}` (never push to {default_branch}).',
    "Let CI run on the branch and fix it (commit and push again) until it passes.",
    "Open a pull request from {branch} to {default_branch} that closes #{number}: call gitea_create_pull (Gitea API: POST /repos/{repo}/pulls).",
    "Wait for the review: the review result will come to you as a new task.",
    "Report what you did: call toolchain_report for task {task_id} with the branch and the pull request number.",
  ],
  deploy_failure: [
    "Read the deployment log of '{check_name}' ({check_url}) for commit {sha} in {repo}.",
    "Find out why the deployment failed.",
    "Fix the cause and deploy again (commit fixes with gitea_change_files, Gitea API: POST /repos/{repo}/contents).",
    "Report what you did: call toolchain_report for task {task_id}, naming the cause, the fix and the new deployment state.",
  ],
  mention: ["{guidance}", "Report what you did: call toolchain_report for task {task_id}."],
  review_merged: [],
  infrastructure_failure: [
    "Check whether Gitea at {gitea_url} answers (the failing call was {operation}: {error}).",
    "Restore the service or its network path, and record what you found with toolchain_comment.",
    "Report what you did: call toolchain_report for task {task_id}.",
  ],
};

/** What to do about a mention, by the intent its text suggests. */
export const MENTION_GUIDANCE: Record<string, string> = {
  question:
    "{commenter} asked you a question on {repo}#{number}. Answer it precisely with gitea_comment on {repo}#{number} (Gitea API: POST /repos/{repo}/issues/{number}/comments).",
  review:
    "{commenter} asked you for a review on {repo}#{number}. Read the diff with gitea_get_pull_diff and submit a review with gitea_submit_review (Gitea API: POST /repos/{repo}/pulls/{number}/reviews).",
  fix: "{commenter} reported a problem to you on {repo}#{number}. Investigate it, fix it with gitea_change_files if it is yours to fix, and answer with gitea_comment on {repo}#{number}.",
  request:
    "{commenter} asked something of you on {repo}#{number}. Do what the comment asks, then answer with gitea_comment on {repo}#{number} (Gitea API: POST /repos/{repo}/issues/{number}/comments).",
};

/** Task titles per scenario variant. */
export const TITLE_TEMPLATES: Record<string, string> = {
  review_result_approved: "Review approved: merge {repo}#{number} ({title})",
  review_result_changes: "Changes requested on {repo}#{number} ({title})",
  review_request: "Review request: {repo}#{number} ({title})",
  review_updated: "Re-review {repo}#{number} ({title})",
  review_comment: "Review comment on {repo}#{number} ({title})",
  ci_failure: "CI failed on {repo}#{number}: {check_name}",
  issue_assigned: "Implement {repo}#{number}: {title}",
  deploy_failure: "Deployment failed in {repo}: {check_name}",
  mention: "Mentioned by {commenter} on {repo}#{number}",
  review_merged: "Merged: {repo}#{number} ({title})",
  infrastructure_failure: "Gitea unreachable: {operation}",
};

/** The rendered event (the task's description), per scenario variant. */
export const EVENT_TEMPLATES: Record<string, string> = {
  review_result_approved:
    "Event: review result APPROVED\nRepository: {repo}\nPull request: #{number} {title} ({url})\nReviewer: {reviewer}\nReview: {review_body}",
  review_result_changes:
    "Event: review result REQUEST_CHANGES\nRepository: {repo}\nPull request: #{number} {title} ({url})\nBranch: {head_ref}\nReviewer: {reviewer}\nReview: {review_body}",
  review_request:
    "Event: review request ({trigger})\nRepository: {repo}\nPull request: #{number} {title} ({url})\nAuthor: {author}\nBranch: {head_ref} → {base_ref}\nHead: {head_sha}",
  review_updated:
    "Event: new commits on a pull request under review\nRepository: {repo}\nPull request: #{number} {title} ({url})\nAuthor: {author}\nNew head: {new_sha}",
  review_comment:
    "Event: review comment\nRepository: {repo}\nPull request: #{number} {title} ({url})\nReviewer: {reviewer}\nComment: {review_body}",
  ci_failure:
    "Event: CI failure\nRepository: {repo}\nPull request: #{number} {title} ({url})\nBranch: {head_ref}\nCommit: {sha}\nCheck: {check_name} ({check_source}) → {check_state}\nDetails: {check_description}\nFailed steps: {failed_steps}\nLink: {check_url}",
  issue_assigned: "Event: issue assigned\nRepository: {repo}\nIssue: #{number} {title} ({url})\nLabels: {labels}\n\n{issue_body}",
  deploy_failure:
    "Event: deployment failure\nRepository: {repo}\nCommit: {sha}\nBranch: {branch}\nCheck: {check_name} ({check_source}) → {check_state}\nDetails: {check_description}\nLink: {check_url}",
  mention:
    "Event: mention ({source_type})\nRepository: {repo}\nOn: #{number} {title} ({url})\nFrom: {commenter}\nIntent: {intent}\n\n{content}",
  review_merged: "Event: pull request merged\nRepository: {repo}\nPull request: #{number} {title} ({url})\nMerged by: {merged_by}",
  infrastructure_failure:
    "Event: Gitea unreachable\nGitea: {gitea_url}\nFailed call: {operation}\nError: {error}\nWhile working on: task {origin_task_id} ({origin_title})",
};

export const SECTION_TITLES = {
  context: "## Toolchain task {task_id}: {title}",
  steps: "### Steps you must carry out",
  noSteps: "### Steps\n\nNone: this event only informs you. The task completes without a report.",
  constraints: "## Hard rules (mandatory)",
  report: "## How to report",
};

export const CONSTRAINT_RULES: string[] = [
  "These are requirements, not suggestions. Breaking any of them fails the task.",
  "1. Carry out every step above, in order. Do not skip one. Reading the event without acting is a failure: this is not a notification.",
  "2. When the steps are done, call toolchain_report once with what you did and what came of it. A task without a report is marked failed.",
  "3. Never try to change the task's status yourself (working, done, failed): Beaver decides that from your report.",
  "4. Do not send mail to other agents about this task. Everything you do happens in the toolchain and leaves a trace in Gitea.",
  "5. If you need someone else (missing access, a decision, data), ask them with gitea_comment on the related pull request or issue, @mentioning them.",
  "6. If a step truly cannot be done, still do all the others, and explain in your report why that one was impossible.",
];

/** Thoughts an agent may have that mean it is about to fail, with the answer to each. */
export const RED_FLAGS: [thought: string, answer: string][] = [
  ['"I\'ll just take note of this."', "Wrong. This is an instruction to act: carry out every listed step."],
  ['"There is nothing for me to do here."', "Wrong. Look at the numbered steps: each one is yours to do."],
  ['"I\'ll handle it later."', "Wrong. Act now; there is no later in this run."],
  ['"I already know about it."', "Knowing is not doing. Only the steps plus a report complete the task."],
  ['"There are too many steps, a few will do."', "Wrong. Do all of them, one after the other."],
  ['"This step does not apply here."', "Then say why in your report — and still do every other step."],
];

export const REPORT_TEXT: string[] = [
  "Task id: {task_id}. Your tools: toolchain_report, toolchain_output, toolchain_comment and the gitea_* tools.",
  "- toolchain_report: the proof that you did the work. Call it once, at the end, with a short account: what you changed (files, branches, pull requests), what you submitted (reviews, comments, merges) and the result (CI state, review state).",
  "- toolchain_output: attach a result that others reuse (a review summary, a fix plan, a log excerpt).",
  "- toolchain_comment: a note on the task (an observation, a hand-off) — it is not a report.",
  "- You never set the task's status yourself (there is no tool for it): Beaver marks it done when your report is verified.",
  "No report means the task fails and is sent back to you or escalated.",
];

export const REPORT_TEXT_NO_STEPS = "Task id: {task_id}. Nothing to report: this task completes on its own once you have read it.";

export const RUN_CONTENT = {
  start:
    "Carry out toolchain task {task_id} now: {title}. The event, the steps and the rules are in your instructions. Finish with toolchain_report.",
  startNoSteps: "Read toolchain task {task_id}: {title}. It needs no action.",
  retry:
    "Carry out toolchain task {task_id} again (attempt {attempt} of {max_attempts}): {title}. The previous attempt failed: {reason}. Do every step and finish with toolchain_report.",
  reminder:
    "Reminder: toolchain task {task_id} ({title}) still has no report. Finish the steps now and call toolchain_report; without a report the task fails and is escalated.",
};

/** Comment posted on the PR/issue when a task failed verification (business failure). */
export const BUSINESS_FAILURE_COMMENT =
  "@{assignee} Beaver task {task_id} ({action_type}: {title}) ended without a verifiable result: {reason}.\n\nIt goes back to you for attempt {next_attempt} of {max_attempts}. Carry out the steps and report with toolchain_report.\n\n{marker}";

export const BUSINESS_FAILURE_COMMENT_FINAL =
  "@{assignee} Beaver task {task_id} ({action_type}: {title}) ended without a verifiable result: {reason}.\n\nNo attempts are left; it has been escalated to the supervisor.\n\n{marker}";

/** Issue opened for the supervisor on a system failure. */
export const SYSTEM_FAILURE_ISSUE_TITLE = "[beaver] System failure in task {task_id}: {title}";
export const SYSTEM_FAILURE_ISSUE_BODY =
  "Beaver could not complete toolchain task {task_id} and needs a supervisor.\n\n- Action: {action_type}\n- Assigned agent: {agent_id}\n- Related: {related}\n- Attempts: {attempts}\n- Cause: {reason}\n\nThe task's history is at GET /api/toolchain/tasks/{task_id}.\n\n{marker}";
