/**
 * A skill's stats on its page (docs/learning.md, "Skill stats"; `GET /api/skills/:name/stats`): runs
 * that activated it, success and feedback rates per version, against comparable runs without it (the
 * same agents' runs, and those with similar messages), each with its counts so a reader sees how much
 * evidence stands behind a rate.
 */
import { api } from "../api/client";
import type { Schemas } from "../api/openapi";
import { Loading, useLoad } from "../ui";

type Counts = Schemas["RunCounts"];

function rate(r: number | null): string {
  return r === null ? "—" : `${Math.round(r * 100)}%`;
}

function Row({ label, c }: { label: string; c: Counts }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td>{c.runs}</td>
      <td>
        {rate(c.success_rate)}{" "}
        <span class="muted small">
          ({c.success} of {c.success + c.failure})
        </span>
      </td>
      <td>
        {rate(c.feedback.up_rate)}{" "}
        <span class="muted small">
          ({c.feedback.up} up · {c.feedback.down} down · {c.feedback.none} unrated)
        </span>
      </td>
    </tr>
  );
}

export function SkillStats({ name, tick }: { name: string; tick: number }) {
  const stats = useLoad(async () => await api("get", "/api/skills/{name}/stats", { params: { name } }), [name, tick]);
  return (
    <section aria-label="Stats" data-testid="skill-stats">
      <h3>Stats</h3>
      <Loading state={stats}>
        {(s) =>
          s.runs === 0 ? (
            <p class="muted">No run has activated this skill yet.</p>
          ) : (
            <table>
              <caption class="small muted">
                Success counts finished runs; feedback counts people's ratings and toolchain verdicts. Comparable runs did not activate{" "}
                {s.skill}.
              </caption>
              <thead>
                <tr>
                  <th scope="col">runs</th>
                  <th scope="col">count</th>
                  <th scope="col">success</th>
                  <th scope="col">rated up</th>
                </tr>
              </thead>
              <tbody>
                <Row label="all versions" c={s.overall} />
                {s.versions.map((v) => (
                  <Row key={v.version} label={v.version} c={v} />
                ))}
                <Row label="same agents, without it" c={s.baseline} />
                {s.similar_baseline ? <Row label="similar messages, without it" c={s.similar_baseline} /> : null}
              </tbody>
            </table>
          )
        }
      </Loading>
    </section>
  );
}
