/**
 * Usage (GET /api/usage): tokens of the workspace's runs by day — a small bar chart drawn as SVG, no
 * chart library — and by model, agent and session as tables.
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Schemas } from "../api/openapi";
import { Empty, Link, Loading, useLoad } from "../ui";

type Row = Schemas["UsageRow"];

const fmt = (n: number) => n.toLocaleString();

/** Every day from `since` to today (UTC), with the days that had no run at zero. */
function fillDays(since: number, rows: Row[]): Row[] {
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const out: Row[] = [];
  for (let t = since; t <= Date.now(); t += 86_400_000) {
    const key = new Date(t).toISOString().slice(0, 10);
    out.push(byKey.get(key) ?? { key, runs: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 });
  }
  return out;
}

/** Stacked bars (input below, output above) per day; the title of each bar says the numbers. */
function DayChart({ days }: { days: Row[] }) {
  const max = Math.max(1, ...days.map((d) => d.input_tokens + d.output_tokens));
  const w = 640;
  const h = 180;
  const bar = w / days.length;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${w} ${h + 20}`} role="img" aria-label={`Tokens per day over the last ${days.length} days`}>
        {days.map((d, i) => {
          const ih = (d.input_tokens / max) * h;
          const oh = (d.output_tokens / max) * h;
          const x = i * bar + bar * 0.15;
          return (
            <g key={d.key}>
              <title>{`${d.key}: ${fmt(d.input_tokens)} in, ${fmt(d.output_tokens)} out, ${d.runs} runs`}</title>
              <rect class="bar-in" x={x} y={h - ih} width={bar * 0.7} height={ih} />
              <rect class="bar-out" x={x} y={h - ih - oh} width={bar * 0.7} height={oh} />
            </g>
          );
        })}
        <line x1="0" y1={h} x2={w} y2={h} class="axis" />
        <text x="0" y={h + 15} class="tick">
          {days[0]?.key}
        </text>
        <text x={w} y={h + 15} class="tick" text-anchor="end">
          {days.at(-1)?.key}
        </text>
      </svg>
      <figcaption class="small muted">
        <span class="swatch bar-in" /> input <span class="swatch bar-out" /> output · most in one day: {fmt(max)} tokens
      </figcaption>
    </figure>
  );
}

function UsageTable({ title, rows, name, link }: { title: string; rows: Row[]; name: string; link?: (r: Row) => string }) {
  return (
    <div class="card">
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <Empty>No run in this period.</Empty>
      ) : (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th>{name}</th>
                <th>runs</th>
                <th>input</th>
                <th>output</th>
                <th>total</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.key}>
                  <td>{link ? <Link href={link(r)}>{r.label || r.key}</Link> : r.key}</td>
                  <td class="usage">{fmt(r.runs)}</td>
                  <td class="usage">{fmt(r.input_tokens)}</td>
                  <td class="usage">{fmt(r.output_tokens)}</td>
                  <td class="usage">{fmt(r.total_tokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

export function UsagePage() {
  const [days, setDays] = useState(30);
  const report = useLoad(() => api("get", "/api/usage", { query: { days } }), [days]);
  return (
    <section class="panel page" aria-label="Usage">
      <div class="row spread">
        <h2>Usage</h2>
        <label class="row">
          Period{" "}
          <select value={String(days)} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            <option value="7">7 days</option>
            <option value="30">30 days</option>
            <option value="90">90 days</option>
          </select>
        </label>
      </div>
      <Loading state={report}>
        {(r) => {
          const total = r.days.reduce((s, d) => s + d.total_tokens, 0);
          return (
            <>
              <p data-testid="usage-total">
                <strong>{fmt(total)}</strong> tokens in {fmt(r.days.reduce((s, d) => s + d.runs, 0))} runs
              </p>
              <DayChart days={fillDays(r.since, r.days)} />
              <div class="cards">
                <UsageTable title="By model" name="model" rows={r.models} />
                <UsageTable title="By agent" name="agent" rows={r.agents} />
                <UsageTable title="By session" name="session" rows={r.sessions} link={(x) => `/chat/${encodeURIComponent(x.key)}`} />
              </div>
            </>
          );
        }}
      </Loading>
    </section>
  );
}
