/**
 * Pure skill selection for one run (docs/skills-and-plugins.md, "Skills in a run"): lexical recall
 * ranked with BM25 (MiniSearch's BM25+) over each skill's name, description and optional
 * `metadata.keywords`, optional embedding recall (cosines computed by the caller), a reciprocal-rank
 * fusion of the two, and the threshold rule that decides when no auxiliary model does. No I/O: the
 * provider (provider.ts) loads the catalog and vectors; the benchmark (bench/skill-selection.ts)
 * times this module on generated catalogs.
 */
import MiniSearch from "minisearch";
import type { SkillCandidate, SkillScores } from "../../runtime/index.ts";
import { setBounded } from "../../kernel/memo.ts";

export interface CatalogSkill {
  name: string;
  description: string;
  /** `metadata.keywords` of the SKILL.md frontmatter, split on commas and spaces. */
  keywords: string[];
  /** `v0003`, or `builtin`. */
  version: string;
  content_hash: string;
}

export interface RankedSkill extends SkillCandidate {
  /** Distinct query terms the skill matched (lexical recall). */
  matched_terms: number;
}

/** How many recalled candidates are offered to the final choice (and recorded with their scores). */
export const TOP_K = 8;
/** At most this many skills are activated automatically (explicit and pinned ones come on top). */
export const MAX_AUTO_ACTIVATED = 3;
/**
 * The threshold rule used when no auxiliary model decides. A candidate is activated when it matched at
 * least `MIN_MATCHED_TERMS` distinct content words of the message and at least `MIN_COVERAGE` of them
 * (so two generic words of a long request do not trigger a skill), its BM25 score is at least
 * `MIN_BM25`, and at least `MIN_RELATIVE` of the run's best score; or when its embedding cosine is at
 * least `MIN_COSINE`. BM25 grows with the catalog (rarer terms weigh more), so the relative bound
 * does most of the work; the absolute one only rejects weak single-field matches.
 */
export const THRESHOLD = { MIN_MATCHED_TERMS: 2, MIN_COVERAGE: 0.5, MIN_BM25: 2, MIN_RELATIVE: 0.5, MIN_COSINE: 0.6 } as const;

/** Words that say nothing about which skill applies. */
const TOKEN_RE = /[^\p{L}\p{N}]+/u;

const STOP_WORDS = new Set(
  (
    "a an and are as at be but by can could do does for from had has have how i if in into is it its me my of on or our please " +
    "should so some than that the their them then there these they this to too us was we what when where which while who why will " +
    "with would you your i'm it's let lets want need help hi hello thanks thank just also any all get got"
  ).split(" "),
);

/** Lower-case, drop stop words and one-letter tokens, strip the commonest English suffixes. */
export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.length < 2 || STOP_WORDS.has(t)) return null;
  return stem(t);
}

function stem(t: string): string {
  if (t.length > 5 && t.endsWith("ing")) return t.slice(0, -3);
  if (t.length > 4 && t.endsWith("ies")) return `${t.slice(0, -3)}y`;
  if (t.length > 3 && t.endsWith("s") && !t.endsWith("ss") && !t.endsWith("us")) return t.slice(0, -1);
  return t;
}

type Doc = { id: string; name: string; description: string; keywords: string };

export type SkillIndex = MiniSearch<Doc>;

/** A BM25 index of a catalog. */
export function buildIndex(catalog: readonly CatalogSkill[]): SkillIndex {
  const index = new MiniSearch<Doc>({
    fields: ["name", "description", "keywords"],
    processTerm,
    tokenize: (text) => text.split(TOKEN_RE).filter(Boolean),
  });
  index.addAll(
    catalog.map((s) => ({ id: s.name, name: s.name.replace(/-/g, " "), description: s.description, keywords: s.keywords.join(" ") })),
  );
  return index;
}

const indexCache = new Map<string, SkillIndex>();
const INDEX_CACHE_SIZE = 16;

/** The index of a catalog, reused within the isolate while the catalog (names and content hashes) is unchanged. */
export function cachedIndex(catalog: readonly CatalogSkill[]): SkillIndex {
  const key = catalogKey(catalog);
  const index = indexCache.get(key) ?? buildIndex(catalog);
  setBounded(indexCache, key, index, INDEX_CACHE_SIZE); // most recently used last
  return index;
}

/** A 53-bit FNV-style hash of the catalog's names and content hashes (a cache key, not a security boundary). */
export function catalogKey(catalog: readonly CatalogSkill[]): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (const s of catalog) {
    const text = `${s.name}\u0000${s.content_hash}\u0001`;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
  }
  return `${catalog.length}:${(h2 >>> 0).toString(36)}${(h1 >>> 0).toString(36)}`;
}

/** The distinct content terms of a message, as the index sees them. */
export function queryTerms(message: string): Set<string> {
  const out = new Set<string>();
  for (const token of message.split(TOKEN_RE)) {
    const term = token ? processTerm(token) : null;
    if (term) out.add(term);
  }
  return out;
}

/** BM25 recall: every skill matching the message, best first, with its score and matched-term count. */
export function lexicalRecall(index: SkillIndex, message: string): { name: string; bm25: number; matched_terms: number }[] {
  const results = index.search(message, {
    boost: { name: 2, keywords: 2, description: 1 },
    prefix: (term) => term.length >= 4,
    fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
    combineWith: "OR",
  });
  return results.map((r) => ({ name: String(r.id), bm25: r.score, matched_terms: new Set(r.queryTerms).size }));
}

export { cosine } from "../../kernel/vectors.ts";

/** Reciprocal-rank fusion constant (the usual 60). */
const RRF_K = 60;

/**
 * The top-k candidates of a run: lexical recall, plus embedding recall when `cosines` (name → cosine)
 * is given, fused by reciprocal rank. Pure.
 */
export function rankSkills(
  catalog: readonly CatalogSkill[],
  index: SkillIndex,
  message: string,
  cosines?: ReadonlyMap<string, number>,
  k = TOP_K,
): RankedSkill[] {
  const byName = new Map(catalog.map((s) => [s.name, s]));
  const lexical = lexicalRecall(index, message).filter((r) => byName.has(r.name));
  const best = lexical[0]?.bm25 ?? 0;
  const terms = Math.max(1, queryTerms(message).size);
  const scores = new Map<string, SkillScores & { matched_terms: number }>();
  lexical.forEach((r, rank) =>
    scores.set(r.name, {
      bm25: round(r.bm25),
      bm25_relative: round(best > 0 ? r.bm25 / best : 0),
      coverage: round(Math.min(1, r.matched_terms / terms)),
      fused: 1 / (RRF_K + rank + 1),
      matched_terms: r.matched_terms,
    }),
  );
  if (cosines) {
    const semantic = [...cosines].filter(([name]) => byName.has(name)).sort((a, b) => b[1] - a[1]);
    semantic.forEach(([name, cos], rank) => {
      const s = scores.get(name) ?? { matched_terms: 0, fused: 0 };
      s.embedding = round(cos);
      s.fused = (s.fused ?? 0) + 1 / (RRF_K + rank + 1);
      scores.set(name, s);
    });
  }
  return [...scores]
    .map(([name, { matched_terms, ...s }]) => ({
      name,
      version: byName.get(name)!.version,
      scores: { ...s, fused: Math.round((s.fused ?? 0) * 1e6) / 1e6 },
      matched_terms,
    }))
    .sort((a, b) => (b.scores.fused ?? 0) - (a.scores.fused ?? 0) || a.name.localeCompare(b.name))
    .slice(0, k);
}

/** The threshold rule (see `THRESHOLD`): which ranked candidates to activate without an auxiliary model. */
export function thresholdChoice(ranked: readonly RankedSkill[]): string[] {
  return ranked
    .filter((r) => {
      const s = r.scores;
      const lexical =
        r.matched_terms >= THRESHOLD.MIN_MATCHED_TERMS &&
        (s.coverage ?? 0) >= THRESHOLD.MIN_COVERAGE &&
        (s.bm25 ?? 0) >= THRESHOLD.MIN_BM25 &&
        (s.bm25_relative ?? 0) >= THRESHOLD.MIN_RELATIVE;
      const semantic = (s.embedding ?? 0) >= THRESHOLD.MIN_COSINE;
      return lexical || semantic;
    })
    .slice(0, MAX_AUTO_ACTIVATED)
    .map((r) => r.name);
}

export function describeThreshold(): string {
  return (
    `threshold rule: at least ${THRESHOLD.MIN_MATCHED_TERMS} matched terms covering >= ${THRESHOLD.MIN_COVERAGE} of the message's, BM25 >= ${THRESHOLD.MIN_BM25} and >= ` +
    `${THRESHOLD.MIN_RELATIVE} x the best score, or embedding cosine >= ${THRESHOLD.MIN_COSINE}; at most ${MAX_AUTO_ACTIVATED}`
  );
}

/** Keywords from `metadata.keywords` (a string, by the specification: comma- or space-separated). */
export function keywordsOf(frontmatter: Record<string, unknown>): string[] {
  const metadata = frontmatter.metadata;
  if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) return [];
  const raw = (metadata as Record<string, unknown>).keywords;
  return typeof raw === "string"
    ? raw
        .split(/[,\s]+/)
        .filter(Boolean)
        .slice(0, 50)
    : [];
}

const round = (n: number) => Math.round(n * 1000) / 1000;
