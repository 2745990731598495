/** Archive rejections as AppErrors: undecodable → 400, policy (links, escapes, limits) → 422. */
import { AppError } from "../../kernel/errors.ts";
import { describeProblems, type Problem } from "../../kernel/content-tree/problems.ts";

export function archiveUnreadable(message: string): AppError {
  return new AppError("bad_request", `Archive could not be read: ${message}`);
}

export function archiveRejected(problems: Problem[]): AppError {
  return new AppError("unprocessable", `Archive rejected: ${describeProblems(problems)}`, { details: { problems } });
}
