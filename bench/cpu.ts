/**
 * CPU time of a `wrangler dev` process group (wrangler's proxy in Node and workerd with every isolate
 * of the Worker, its Durable Objects and the local D1), read from /proc. Wall-clock latency on a shared
 * 2-core machine moves with the load; the CPU a side spends per turn does not, so `npm run bench:peers`
 * reports both (docs/performance.md, "Running the comparison"). Linux only: elsewhere it reports nothing.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";

let ticksPerSecond: number | null = null;

function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
  return ticksPerSecond;
}

/** utime + stime (ticks) and the process group of one /proc/<pid>/stat; the name may hold spaces, so fields are read after its ')'. */
function statOf(pid: number): { group: number; ticks: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // After the name: state(0) ppid(1) pgrp(2) … utime(11) stime(12).
    return { group: Number(fields[2]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null; // exited
  }
}

/** A meter over the processes of one group, found once (wrangler and workerd stay up for the whole run). */
export interface CpuMeter {
  /** CPU ms used by the group so far. */
  read(): number;
}

export function groupCpuMeter(group: number): CpuMeter | null {
  if (group <= 0 || !existsSync("/proc/self/stat")) return null;
  const pids = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => statOf(pid)?.group === group);
  if (pids.length === 0) return null;
  const ms = 1000 / clockTicks();
  return { read: () => pids.reduce((sum, pid) => sum + (statOf(pid)?.ticks ?? 0), 0) * ms };
}
