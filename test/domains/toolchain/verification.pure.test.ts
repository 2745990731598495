import { describe, expect, it } from "vitest";
import { verifyToolchainTask } from "../../../src/domains/toolchain/verification.ts";
import { verifyMail } from "../../../src/domains/mail/handler.ts";

const c = (author: string, commentType: string, body: string) => ({ author, commentType, body });

describe("verification (docs/toolchain.md)", () => {
  it("an action report passes first", () => {
    expect(verifyToolchainTask("ci_failure", { comments: [c("jony", "action_report", "fixed")], outputs: 0 })).toMatchObject({
      passed: true,
      reason: "has_action_report",
    });
  });
  it("else an output passes", () => {
    expect(verifyToolchainTask("review_request", { comments: [], outputs: 1 })).toMatchObject({ passed: true, reason: "has_output" });
  });
  it("else a non-system comment of at least 20 characters passes", () => {
    expect(verifyToolchainTask("mention", { comments: [c("jony", "general", "I answered on the issue.")], outputs: 0 })).toMatchObject({
      passed: true,
      reason: "has_comment",
    });
    expect(verifyToolchainTask("mention", { comments: [c("jony", "general", "  short note   ")], outputs: 0 }).passed).toBe(false);
    expect(
      verifyToolchainTask("mention", { comments: [c("system", "observation", "Gitea still unreachable: a long note")], outputs: 0 }).passed,
    ).toBe(false);
  });
  it("else it fails", () => {
    expect(verifyToolchainTask("review_result", { comments: [], outputs: 0 })).toMatchObject({ passed: false, reason: "no_action" });
  });
  it("merge notices and infrastructure tasks always pass", () => {
    expect(verifyToolchainTask("review_merged", { comments: [], outputs: 0 })).toMatchObject({ passed: true, reason: "auto_pass" });
    expect(verifyToolchainTask("infrastructure_failure", { comments: [], outputs: 0 })).toMatchObject({
      passed: true,
      reason: "auto_pass",
    });
  });
  it("mail: inform passes when read, a request only with a reply", () => {
    expect(verifyMail({ performative: "inform" }, { replies: 0 }).passed).toBe(true);
    expect(verifyMail({ performative: "request" }, { replies: 0 }).passed).toBe(false);
    expect(verifyMail({ performative: "request" }, { replies: 1 }).passed).toBe(true);
  });
});
