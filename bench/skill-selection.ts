/**
 * Skill selection per run (docs/skills-and-plugins.md, "Skills in a run"): (1) the pure selection of
 * src/domains/skills/selection.ts over generated catalogs of 10, 100 and 1,000 skills — BM25 index
 * built per run (cold) and reused from the isolate cache (warm), then ranking and the threshold rule;
 * (2) end to end on `wrangler dev` with a zero-latency scripted model: a no-tool turn in a workspace
 * with only the builtin skill (the baseline turn) against the same turn with 100 installed skills.
 * Figures are ratios against the baseline turn, never pass/fail thresholds.
 */
import { performance } from "node:perf_hooks";
import { buildIndex, cachedIndex, rankSkills, thresholdChoice, type CatalogSkill } from "../src/domains/skills/selection.ts";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";

const SIZES = [10, 100, 1_000];
const SAMPLES = 40;
const TURNS = 30;
const E2E_SKILLS = 100;

const VOCAB = (
  "pdf spreadsheet invoice email calendar github gitlab docker kubernetes terraform postgres mysql redis kafka slack jira " +
  "figma slide brand colour typography chart report summary translate french german legal contract review security audit " +
  "python typescript rust golang java swift android ios react vue svelte tailwind css html accessibility testing benchmark " +
  "deploy release changelog migration schema api rest graphql grpc webhook oauth token secret backup restore monitor alert"
).split(" ");

function catalog(n: number): CatalogSkill[] {
  let x = 12345;
  const pick = () => VOCAB[(x = (x * 1103515245 + 12345) >>> 0) % VOCAB.length]!;
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 24 }, pick);
    return {
      name: `skill-${i}-${words[0]}-${words[1]}`,
      description: `Helps with ${words.slice(0, 12).join(" ")}. Use when the user asks about ${words.slice(12).join(", ")}.`,
      keywords: words.slice(2, 5),
      version: "v0001",
      content_hash: `hash-${i}`.padEnd(64, "0"),
    };
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const MESSAGE = "Please review the terraform migration for our postgres backup and write a changelog entry";

function timeSelection(skills: CatalogSkill[], cold: boolean): number {
  const samples: number[] = [];
  cachedIndex(skills); // warm the cache for the warm figure
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = performance.now();
    const index = cold ? buildIndex(skills) : cachedIndex(skills);
    thresholdChoice(rankSkills(skills, index, MESSAGE));
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

async function endToEnd(): Promise<{ baseline: number; withSkills: number } | null> {
  const model = await startScriptedModelServer();
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  try {
    const turnP50 = async (skills: number): Promise<number> => {
      const { token } = await benchWorkspace(dev, call);
      await call("PUT", "/api/config", token, { model: { provider: "openai-compatible", id: "echo:bench", base_url: `${model.url}/v1` } });
      const cat = catalog(skills);
      for (const s of cat) {
        const md = `---\nname: ${s.name}\ndescription: ${s.description}\n---\n\n# ${s.name}\n\nSteps.\n`;
        await call("PUT", `/api/skills/${s.name}`, token, { files: [{ path: "SKILL.md", content: md }] });
      }
      const id = ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
      const samples: number[] = [];
      for (let i = 0; i < TURNS + 3; i++) {
        const t0 = performance.now();
        await (await call("POST", `/api/sessions/${id}/messages?wait=true`, token, { content: MESSAGE })).arrayBuffer();
        if (i >= 3) samples.push(performance.now() - t0);
      }
      return median(samples);
    };
    return { baseline: await turnP50(0), withSkills: await turnP50(E2E_SKILLS) };
  } finally {
    await dev.stop();
    await model.stop();
  }
}

export async function run(): Promise<void> {
  const e2e = await endToEnd().catch((err: unknown) => {
    console.log(`end-to-end figure skipped: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  });
  const baseline = e2e?.baseline ?? null;
  console.log(baseline !== null ? `baseline turn (builtin skill only), p50: ${baseline.toFixed(2)} ms` : "baseline turn: not measured");
  for (const n of SIZES) {
    const skills = catalog(n);
    const cold = timeSelection(skills, true);
    const warm = timeSelection(skills, false);
    const ratio = (ms: number) => (baseline !== null ? ` = ${(ms / baseline).toFixed(3)} x baseline turn` : "");
    console.log(
      `${String(n).padStart(5)} skills: selection per run, index built per run ${cold.toFixed(3)} ms${ratio(cold)}; ` +
        `index cached ${warm.toFixed(3)} ms${ratio(warm)}`,
    );
  }
  if (e2e)
    console.log(
      `end to end: no-tool turn with ${E2E_SKILLS} installed skills p50 ${e2e.withSkills.toFixed(2)} ms = ${(e2e.withSkills / e2e.baseline).toFixed(2)} x baseline turn`,
    );
}
