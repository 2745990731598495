/**
 * The skills domain's `SkillProvider` (src/runtime/skills.ts), registered at the composition root
 * (src/app/runtime.ts): at run open it loads the workspace's catalog — every active skill at its
 * current version, then the builtins no active skill shadows; never a disabled skill or another
 * workspace's — recalls candidates (BM25 over name, description and keywords; embeddings when
 * `embedding_model` is configured), lets the auxiliary model choose among the top ones (else the
 * documented threshold rule of selection.ts decides), adds explicit and pinned skills, and reads the
 * activated skills' SKILL.md bodies. docs/skills-and-plugins.md, "Skills in a run".
 */
import { z } from "zod";
import type { Env } from "../../storage/env.ts";
import { RevisionCache } from "../../kernel/revision-cache.ts";
import { makeDb } from "../../storage/db/client.ts";
import { readBlob, requireManifest } from "../../storage/blob/store.ts";
import { versionLabel } from "../../kernel/content-tree/hashing.ts";
import type {
  ActivatedSkill,
  ActivationReason,
  ModelHandle,
  SkillActivation,
  SkillOverride,
  SkillProvider,
  SkillSelectRequest,
} from "../../runtime/index.ts";
import { aiSdk } from "../../runtime/index.ts";
import { builtinSkills } from "./builtin.ts";
import { listActiveCurrent } from "./store.ts";
import { allowedToolsOf, parseSkillMd } from "./frontmatter.ts";
import {
  MAX_AUTO_ACTIVATED,
  TOP_K,
  cachedIndex,
  cosine,
  describeThreshold,
  keywordsOf,
  rankSkills,
  thresholdChoice,
  type CatalogSkill,
  type RankedSkill,
} from "./selection.ts";
import { embeddingCosines, providerEmbeddingModel, type EmbeddingFactory } from "./embeddings.ts";
import { log, errorFields } from "../../kernel/log.ts";

/** One activated SKILL.md body is cut to this many characters; all bodies of a run to `MAX_BODIES_CHARS`. */
export const MAX_BODY_CHARS = 16_000;
export const MAX_BODIES_CHARS = 48_000;
/** Explicit and pinned skills beyond this many are ignored (recorded as such in the rationale). */
export const MAX_REQUESTED = 8;

/** A catalog entry and where its files are: a stored tree, or a builtin. */
export interface LoadedSkill extends CatalogSkill {
  treeHash: string | null;
  /** The frontmatter's `allowed-tools`: hints for the run's tool assembly when the skill is activated. */
  allowedTools: string[];
}

/**
 * Catalogs by workspace, under the content revision they were read at: a run whose revision matches
 * reuses the catalog instead of reading it (docs/performance.md, "Run-open reads"). Read-only values.
 */
const catalogs = new RevisionCache<readonly LoadedSkill[]>();

/** The run's catalog: the one read under its revision when that is still current, else read now (after the revision). */
async function catalogAtRevision(req: SkillSelectRequest): Promise<readonly LoadedSkill[]> {
  if (!req.revision) return loadCatalog(req.env, req.workspaceId);
  const revision = await req.revision;
  return catalogs.get(req.workspaceId, revision, () => loadCatalog(req.env, req.workspaceId));
}

/** The workspace's skill catalog: active current versions, then unshadowed builtins; sorted by name. */
export async function loadCatalog(env: Env, workspaceId: string): Promise<LoadedSkill[]> {
  const rows = await listActiveCurrent(makeDb(env.DB), workspaceId);
  const out: LoadedSkill[] = rows.map(({ skill, version }) => {
    const frontmatter = JSON.parse(version.frontmatter) as Record<string, unknown>;
    return {
      name: skill.name,
      description: skill.description,
      keywords: keywordsOf(frontmatter),
      version: versionLabel(version.versionNo),
      content_hash: version.contentHash,
      treeHash: version.treeHash,
      allowedTools: allowedToolsOf(frontmatter),
    };
  });
  const taken = new Set(out.map((s) => s.name));
  for (const [name, b] of await builtinSkills()) {
    if (taken.has(name)) continue;
    out.push({
      name,
      description: b.skill.frontmatter.description,
      keywords: keywordsOf(b.skill.frontmatter),
      version: "builtin",
      content_hash: b.skill.contentHash,
      treeHash: null,
      allowedTools: allowedToolsOf(b.skill.frontmatter),
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The catalog a run with `skill_overrides` sees: each overridden skill at the override's tree (added
 * when the workspace has no such skill), so an evaluation runs a draft exactly as a published version.
 */
export function withOverrides(catalog: readonly LoadedSkill[], overrides: readonly SkillOverride[] | undefined): LoadedSkill[] {
  if (!overrides || overrides.length === 0) return [...catalog];
  const byName = new Map(catalog.map((s) => [s.name, s]));
  for (const o of overrides) {
    const base = byName.get(o.name);
    byName.set(o.name, {
      name: o.name,
      description: o.description,
      keywords: base?.keywords ?? [],
      version: o.version,
      content_hash: o.content_hash,
      treeHash: o.tree_hash,
      allowedTools: o.allowed_tools ?? [],
    });
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The SKILL.md of a catalog entry, as text, or null when its content is gone. */
export async function readSkillMd(env: Env, workspaceId: string, skill: LoadedSkill): Promise<string | null> {
  if (skill.treeHash === null) {
    const bytes = (await builtinSkills()).get(skill.name)?.skill.files.find((f) => f.path === "SKILL.md")?.bytes;
    return bytes ? new TextDecoder().decode(bytes) : null;
  }
  const entry = (await requireManifest(env, workspaceId, skill.treeHash)).files.find((f) => f.path === "SKILL.md");
  const obj = entry ? await readBlob(env, workspaceId, entry.sha256) : null;
  return obj ? await obj.text() : null;
}

/** A SKILL.md without its frontmatter, capped. */
export function skillBody(name: string, text: string, cap = MAX_BODY_CHARS): string {
  const parsed = parseSkillMd(new TextEncoder().encode(text), "SKILL.md", name);
  const body = (parsed.ok ? parsed.body : text.replace(/^---\n[\s\S]*?\n---\n?/, "")).trim();
  return body.length > cap ? `${body.slice(0, cap)}\n\n[…SKILL.md truncated at ${cap} characters; read the rest with skill_view]` : body;
}

const AuxChoice = z.object({
  skills: z.array(z.string()).max(MAX_AUTO_ACTIVATED).describe("Names of the skills to activate, from the candidates; may be empty"),
  reason: z.string().max(600).describe("One or two sentences: why these skills, or why none"),
});

/** The auxiliary model's choice among the candidates (names it invents are dropped). */
async function auxiliaryChoice(
  aux: ModelHandle,
  message: string,
  ranked: readonly RankedSkill[],
  catalog: ReadonlyMap<string, CatalogSkill>,
  signal?: AbortSignal,
): Promise<{ names: string[]; reason: string }> {
  const list = ranked.map((r) => `- ${r.name}: ${catalog.get(r.name)?.description.replace(/\s+/g, " ").slice(0, 400) ?? ""}`).join("\n");
  // The `ai` SDK loads on first use, not at the Worker's startup (docs/performance.md, "Startup, third pass").
  const { generateText, Output } = await aiSdk();
  const { output } = await generateText({
    model: aux.model,
    output: Output.object({ schema: AuxChoice }),
    system:
      "You decide which skills an AI agent should load before answering a request. A skill is a set of instructions for a kind of task. " +
      `Choose at most ${MAX_AUTO_ACTIVATED} skills from the candidates that clearly help with the request; choose none when none clearly applies.`,
    prompt: `Request:\n${message.slice(0, 4_000)}\n\nCandidate skills:\n${list}`,
    maxRetries: 1,
    ...(signal ? { abortSignal: signal } : {}),
  });
  const allowed = new Set(ranked.map((r) => r.name));
  return { names: [...new Set(output.skills.filter((n) => allowed.has(n)))], reason: output.reason };
}

export interface SkillProviderOptions {
  /** How embedding models are built (the provider packages by default). */
  embeddingFactory?: EmbeddingFactory;
}

export function skillProvider(options: SkillProviderOptions = {}): SkillProvider {
  const embeddingFactory = options.embeddingFactory ?? providerEmbeddingModel;
  return {
    async select(req: SkillSelectRequest): Promise<SkillActivation> {
      const [stored, config] = await Promise.all([catalogAtRevision(req), req.config]);
      const catalog = withOverrides(stored, req.overrides);
      const byName = new Map(catalog.map((s) => [s.name, s]));
      const notes: string[] = [];

      let cosines: Map<string, number> | undefined;
      const embeddingEntry = config.embedding_model;
      if (embeddingEntry && catalog.length > 0 && !req.requestedOnly) {
        try {
          cosines = await embeddingCosines(
            req.env,
            req.workspaceId,
            embeddingEntry,
            embeddingFactory,
            catalog,
            req.message,
            cosine,
            req.signal,
          );
        } catch (err) {
          if (req.signal?.aborted) throw err;
          log.warn("skill embedding recall failed; lexical recall decides", errorFields(err));
          notes.push(`embedding recall failed (${err instanceof Error ? err.message : String(err)}); lexical recall only`);
        }
      }
      // `requestedOnly` (an evaluation run): nothing is ranked, so nothing is chosen beyond the requested skills.
      const ranked = catalog.length > 0 && !req.requestedOnly ? rankSkills(catalog, cachedIndex(catalog), req.message, cosines, TOP_K) : [];
      const scoresOf = (name: string) => ranked.find((r) => r.name === name)?.scores ?? {};

      const chosen = new Map<string, ActivationReason>();
      const unknown: string[] = [];
      const requested: [string, ActivationReason][] = [
        ...req.explicit.map((n): [string, ActivationReason] => [n, "explicit"]),
        ...req.pinned.map((n): [string, ActivationReason] => [n, "pinned"]),
      ];
      for (const [name, reason] of requested) {
        if (chosen.has(name)) continue;
        if (!byName.has(name)) {
          if (!unknown.includes(name)) unknown.push(name);
          continue;
        }
        if (chosen.size >= MAX_REQUESTED) {
          notes.push(`more than ${MAX_REQUESTED} skills requested; '${name}' and later ones were not activated`);
          break;
        }
        chosen.set(name, reason);
      }

      let rationale: string;
      // The auxiliary model is only waited for when there is something for it to choose from.
      const auxiliary = ranked.length === 0 ? null : await req.auxiliary;
      if (req.requestedOnly) rationale = "only the requested skills (skill_choice: requested_only)";
      else if (ranked.length === 0) rationale = "no skill matched the message";
      else if (auxiliary) {
        try {
          const aux = await auxiliaryChoice(auxiliary, req.message, ranked, byName, req.signal);
          for (const name of aux.names) if (!chosen.has(name)) chosen.set(name, "auxiliary_model");
          rationale = `auxiliary model ${auxiliary.modelId}: ${aux.reason}`;
        } catch (err) {
          if (req.signal?.aborted) throw err;
          log.warn("auxiliary skill choice failed; the threshold rule decides", errorFields(err));
          for (const name of thresholdChoice(ranked)) if (!chosen.has(name)) chosen.set(name, "bm25_threshold");
          rationale = `auxiliary model failed (${err instanceof Error ? err.message : String(err)}); ${describeThreshold()}`;
        }
      } else {
        for (const name of thresholdChoice(ranked)) if (!chosen.has(name)) chosen.set(name, "bm25_threshold");
        rationale = describeThreshold();
      }
      if (unknown.length > 0) notes.push(`not offered by this workspace: ${unknown.join(", ")}`);
      if (notes.length > 0) rationale = `${rationale}; ${notes.join("; ")}`;

      const skills: ActivatedSkill[] = [];
      const bodies: { name: string; body: string }[] = [];
      let budget = MAX_BODIES_CHARS;
      for (const [name, reason] of chosen) {
        const skill = byName.get(name)!;
        const text = await readSkillMd(req.env, req.workspaceId, skill);
        if (text === null) continue;
        const body = skillBody(name, text, Math.min(MAX_BODY_CHARS, Math.max(0, budget)));
        budget -= body.length;
        skills.push({
          name,
          version: skill.version,
          content_hash: skill.content_hash,
          reason,
          scores: scoresOf(name),
          ...(skill.allowedTools.length > 0 ? { allowed_tools: skill.allowedTools } : {}),
        });
        bodies.push({ name, body });
      }

      return {
        skills,
        candidates: ranked.map((r) => ({ name: r.name, version: r.version, scores: r.scores })),
        rationale,
        // The catalog's own order (by name), never this message's ranking: the `skills` section is part of the
        // system prompt's stable prefix, the same for every run of a session (docs/agent-loop.md, "Skill messages").
        catalog: catalog.map((s) => ({ name: s.name, description: s.description })),
        bodies,
        unknown,
      };
    },
  };
}
