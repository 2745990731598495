/**
 * When two user messages are "similar" for learning (docs/learning.md, "New-skill candidates" and
 * "Skill stats"): the lexical match the skill activation uses (src/domains/skills/selection.ts) —
 * content terms after stop words and stemming, at least `MIN_MATCHED_TERMS` shared and covering at
 * least `MIN_COVERAGE` of the smaller message's terms. It is the test of "would one skill's
 * description have matched both", needs no model or embedding call, and is deterministic, which the
 * candidates' ids rest on. Pure.
 */
import { THRESHOLD, queryTerms } from "../../skills/selection.ts";

export const termsOf = (message: string): Set<string> => queryTerms(message);

/** The terms two messages share when they are similar, else null. */
export function sharedTerms(a: ReadonlySet<string>, b: ReadonlySet<string>): string[] | null {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (small.size === 0) return null;
  const shared = [...small].filter((t) => large.has(t));
  if (shared.length < THRESHOLD.MIN_MATCHED_TERMS || shared.length / small.size < THRESHOLD.MIN_COVERAGE) return null;
  return shared.sort();
}

export interface Clusterable {
  runId: string;
  terms: ReadonlySet<string>;
}

export interface Cluster<T extends Clusterable> {
  seed: T;
  members: T[];
  /** The seed's terms every member shares with it (the pattern's vocabulary). */
  terms: string[];
}

/**
 * Greedy single-pass grouping in the given order: a run joins the first group whose seed it is
 * similar to, else seeds a new group. The same input in the same order always gives the same groups.
 */
export function clusterBySimilarity<T extends Clusterable>(runs: readonly T[]): Cluster<T>[] {
  const clusters: Cluster<T>[] = [];
  for (const r of runs) {
    let joined = false;
    for (const c of clusters) {
      const shared = sharedTerms(c.seed.terms, r.terms);
      if (!shared) continue;
      c.members.push(r);
      c.terms = c.terms.filter((t) => shared.includes(t));
      joined = true;
      break;
    }
    if (!joined) clusters.push({ seed: r, members: [r], terms: [...r.terms].sort() });
  }
  return clusters;
}
