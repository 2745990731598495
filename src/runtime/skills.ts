/**
 * How skills reach a run (docs/skills-and-plugins.md, "Skills in a run"): the runtime knows only this
 * interface. A domain implements it and the composition root hands it over in `RuntimeServices.skills`
 * (docs/layering.md, "Registration instead of imports"); absent, runs get no skills. The run asks once,
 * when it opens, and freezes the answer with the run: the catalog becomes the `skills` section of the
 * snapshotted system prompt, each activated body its own message before the run's user message
 * (session/skill-messages.ts; docs/agent-loop.md, "Skill messages"), and a choice that activated
 * something the hidden `skill_activation_snapshotted` event and part of the run's state.
 */
import type { Env } from "../storage/env.ts";
import type { WorkspaceConfig } from "../storage/config/schema.ts";
import type { ModelHandle } from "./agent/providers.ts";

/** Why a skill was activated. */
export type ActivationReason = "explicit" | "pinned" | "auxiliary_model" | "bm25_threshold";

/** Recall scores of one candidate (absent: that recall did not run or did not find it). */
export interface SkillScores {
  /** MiniSearch BM25 score over name, description and keywords. */
  bm25?: number;
  /** The BM25 score divided by the best score of this run (1 for the best candidate). */
  bm25_relative?: number;
  /** Share of the message's content words the skill matched (lexical recall). */
  coverage?: number;
  /** Cosine similarity of the message and the skill's embedding. */
  embedding?: number;
  /** Reciprocal-rank fusion of the recalls that ran; the order candidates are offered in. */
  fused?: number;
}

export interface ActivatedSkill {
  name: string;
  /** `v0003`, or `builtin`. */
  version: string;
  content_hash: string;
  reason: ActivationReason;
  scores: SkillScores;
  /**
   * The SKILL.md frontmatter's `allowed-tools` (tool names; absent when it names none): the run's tool
   * assembly offers these tools whatever the limits (docs/agent-loop.md, "Tool assembly").
   */
  allowed_tools?: string[];
}

export interface SkillCandidate {
  name: string;
  version: string;
  scores: SkillScores;
}

export interface SkillActivation {
  /** What the run activated, in order. */
  skills: ActivatedSkill[];
  /** The top recalled candidates the choice was made among (with their scores), activated or not. */
  candidates: SkillCandidate[];
  /** How the choice was made: the auxiliary model's reason, or the threshold rule that applied. */
  rationale: string;
  /** Every skill the workspace offers this run (listed compactly in the prompt). */
  catalog: { name: string; description: string }[];
  /** SKILL.md bodies of the activated skills, frontmatter stripped and capped. */
  bodies: { name: string; body: string }[];
  /** Names asked for (explicitly or pinned) that the workspace does not offer. */
  unknown: string[];
}

/**
 * A run-level replacement of one skill's files: the run sees `name` at this tree instead of its current
 * version (or as a new skill when it has none). Evaluation uses it to run a draft without publishing it.
 */
export interface SkillOverride {
  name: string;
  /** Label recorded in the activation (`draft:<id>`, say). */
  version: string;
  tree_hash: string;
  content_hash: string;
  description: string;
  /** Tool names of the frontmatter's `allowed-tools`. */
  allowed_tools?: string[];
}

export interface SkillSelectRequest {
  env: Env;
  workspaceId: string;
  sessionId: string;
  /** The run's user message. */
  message: string;
  /** Skills the submission named (`skills` on a message). */
  explicit: readonly string[];
  /** Skills pinned by the session (`metadata.skills`) or the agent that submitted the run. */
  pinned: readonly string[];
  /** Only the explicit and pinned skills: no ranking, no embedding or auxiliary-model call (`skill_choice`). */
  requestedOnly?: boolean;
  /**
   * The workspace configuration and its auxiliary model (null when none is configured or it could not
   * be built), still loading when the run asks: the provider reads its catalog beside the config read
   * and waits for these only when it needs them (docs/performance.md, "Run open").
   */
  config: Promise<WorkspaceConfig>;
  /**
   * The workspace's content revision, read with the config (null when it could not be read): the same
   * revision means the skills are as they were, so a provider may reuse the catalog it read under it.
   */
  revision?: Promise<string | null>;
  auxiliary: Promise<ModelHandle | null>;
  /** The run's `skill_overrides`: these skills are offered at the given trees. */
  overrides?: readonly SkillOverride[];
  signal?: AbortSignal;
}

export interface SkillProvider {
  select(request: SkillSelectRequest): Promise<SkillActivation>;
}

/** The tools activated skills name in `allowed-tools`, each with the skills that named it, in activation order. */
export function hintedToolsOf(skills: readonly ActivatedSkill[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const skill of skills) {
    for (const tool of skill.allowed_tools ?? []) out.set(tool, [...(out.get(tool) ?? []), skill.name]);
  }
  return out;
}

export const EMPTY_ACTIVATION: SkillActivation = { skills: [], candidates: [], rationale: "", catalog: [], bodies: [], unknown: [] };

/** Catalog caps: the prompt lists at most this many skills in at most this many characters. */
export const CATALOG_MAX_SKILLS = 40;
export const CATALOG_MAX_CHARS = 4_000;
/** One catalog line's description is cut to this many characters. */
const CATALOG_DESCRIPTION_CHARS = 200;

/** The `skills` prompt section: every available skill, one line each, capped (docs/skills-and-plugins.md). */
export function renderSkillCatalog(catalog: readonly { name: string; description: string }[]): string {
  if (catalog.length === 0) return "";
  const head = [
    "# Skills",
    "Skills are folders of instructions and files for particular tasks. A skill activated for a request arrives in full as its own message before it; " +
      "read any other with the skill_view tool (skill_view({ name }) for its SKILL.md, skill_view({ name, path }) for a file it mentions).",
  ];
  const lines: string[] = [];
  let chars = head.join("\n").length;
  for (const s of catalog) {
    const description = oneLine(s.description);
    const cut = description.length > CATALOG_DESCRIPTION_CHARS ? `${description.slice(0, CATALOG_DESCRIPTION_CHARS - 1)}…` : description;
    const line = `- ${s.name}: ${cut}`;
    if (lines.length >= CATALOG_MAX_SKILLS || chars + line.length + 1 > CATALOG_MAX_CHARS) break;
    lines.push(line);
    chars += line.length + 1;
  }
  const more = catalog.length - lines.length;
  if (more > 0) lines.push(`…and ${more} more; use skill_view with a name to read one.`);
  return [...head, ...lines].join("\n");
}

/** The text of one skill message: the SKILL.md body this run activated, with how to use it. */
export function renderActivatedSkill(skill: { name: string; body: string }): string {
  return [
    `The skill "${skill.name}" was activated for the request that follows. Follow its instructions where they apply; read files it mentions with skill_view.`,
    `<skill name="${skill.name}">\n${skill.body.trim()}\n</skill>`,
  ].join("\n\n");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
