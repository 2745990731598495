/**
 * The task-type handler contract shared by every kind of agent task (docs/toolchain.md): each type
 * builds its agent's prompt from sections and decides from evidence whether the work was done.
 * Toolchain tasks must show an action report (or its fallbacks, src/domains/toolchain/handler.ts);
 * mail tasks pass when read (inform) or answered (request, src/domains/mail/handler.ts).
 */

export type VerifyReason = "auto_pass" | "has_action_report" | "has_output" | "has_comment" | "no_action";

export interface VerifyResult {
  passed: boolean;
  reason: VerifyReason;
  detail: string;
}

/** `T` the task, `E` the evidence its verification reads, `R` which run of the task this is (first, retry, reminder…). */
export interface TaskHandler<T, E, R = unknown> {
  type: "toolchain" | "mail";
  systemPrompt(task: T): string;
  runContent(task: T, run: R): string;
  verify(task: T, evidence: E): VerifyResult;
}

/** Replace `{name}` placeholders in a prompt template; a placeholder without a value is a programming error. */
export function fill(template: string, vars: Record<string, string | number>): string {
  return template.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = vars[name];
    if (value === undefined) throw new Error(`Missing template value '${name}'`);
    return String(value);
  });
}
