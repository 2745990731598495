/**
 * `skill_propose({ name, skill_md, files?, delete_paths?, rationale })`: an agent proposes an edit to a
 * skill of its workspace as a draft for review (docs/learning.md, "Drafts from every source"). The
 * proposal is the skill's current version with SKILL.md (and any given text files) replaced; it is
 * validated and safety-checked like an upload, stored, and recorded as a `pending_review` draft — it
 * is never published by the tool. Registered in the default tool set (src/app/runtime.ts).
 */
import { z } from "zod";
import { defineTool, fail, ok } from "../../runtime/index.ts";
import { AppError } from "../../kernel/errors.ts";
import { makeDb } from "../../storage/db/client.ts";
import { SKILL_NAME_RE } from "../skills/frontmatter.ts";
import { getSkill, getVersion } from "../skills/store.ts";
import { loadTree } from "../learning/tree-files.ts";
import type { TreeFile } from "../../kernel/content-tree/hashing.ts";
import { proposeSkillDraft } from "./learning-drafts.ts";

/** Size limits of one proposal (the tree as a whole is bounded again by the safety check's limits). */
export const PROPOSE_LIMITS = { skillMdChars: 64 * 1024, fileChars: 64 * 1024, files: 20, totalChars: 256 * 1024, rationaleChars: 2_000 };

const relPath = z
  .string()
  .min(1)
  .max(500)
  .refine((p) => p !== "SKILL.md", "SKILL.md goes in skill_md");

export const SkillProposeInput = z
  .strictObject({
    name: z.string().regex(SKILL_NAME_RE, "must be a skill name (lowercase letters, digits, single hyphens)").max(64),
    skill_md: z.string().min(1).max(PROPOSE_LIMITS.skillMdChars).describe("The complete proposed SKILL.md, frontmatter included"),
    files: z
      .array(z.strictObject({ path: relPath, content: z.string().max(PROPOSE_LIMITS.fileChars) }))
      .max(PROPOSE_LIMITS.files)
      .default([])
      .describe("Supporting text files to add or replace (relative paths)"),
    delete_paths: z.array(relPath).max(PROPOSE_LIMITS.files).default([]).describe("Supporting files to remove"),
    rationale: z.string().trim().min(1).max(PROPOSE_LIMITS.rationaleChars).describe("What was learned and why the skill should change"),
  })
  .refine((i) => i.skill_md.length + i.files.reduce((n, f) => n + f.content.length, 0) <= PROPOSE_LIMITS.totalChars, {
    message: `the proposal is larger than ${PROPOSE_LIMITS.totalChars} characters`,
    path: ["files"],
  });
export type SkillProposeInput = z.infer<typeof SkillProposeInput>;

const utf8 = (s: string) => new TextEncoder().encode(s);

export const skillProposeTool = defineTool<SkillProposeInput>({
  name: "skill_propose",
  description:
    "Propose an improvement to a skill of this workspace (what you learned while using it) as a draft for human review. " +
    "Give the complete new SKILL.md and a rationale; the draft is checked for safety and never published by this tool.",
  input: SkillProposeInput,
  async execute(input, ctx) {
    try {
      const db = makeDb(ctx.env.DB);
      const skill = await getSkill(db, ctx.workspaceId, input.name);
      const current = skill ? await getVersion(db, ctx.workspaceId, input.name, skill.currentVersionNo) : undefined;
      const base: TreeFile[] = current ? await loadTree(ctx.env, ctx.workspaceId, current.treeHash) : [];
      const replaced = new Set(["SKILL.md", ...input.files.map((f) => f.path), ...input.delete_paths]);
      const files: TreeFile[] = [
        ...base.filter((f) => !replaced.has(f.path)).map((f) => ({ path: f.path, bytes: f.bytes, executable: f.executable })),
        { path: "SKILL.md", bytes: utf8(input.skill_md), executable: false },
        ...input.files.map((f) => ({ path: f.path, bytes: utf8(f.content), executable: false })),
      ];
      const r = await proposeSkillDraft(ctx.env, ctx.workspaceId, {
        skillName: input.name,
        files,
        proposalKind: "agent_proposal",
        actor: `session:${ctx.sessionId}`,
        provenance: { session_id: ctx.sessionId, run_id: ctx.runId, rationale: input.rationale },
      });
      return ok(
        `Draft ${r.draftId} of skill '${input.name}' recorded for review (safety: ${r.safety.level}${
          r.safety.findings.length > 0 ? `, ${r.safety.findings.length} finding(s)` : ""
        }). It is not published: a reviewer approves or rejects it.`,
      );
    } catch (e) {
      if (e instanceof AppError) return fail(e.code, e.message);
      throw e;
    }
  },
});
