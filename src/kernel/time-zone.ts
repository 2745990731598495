/**
 * IANA time zones: whether the runtime knows a name (shared by the config schema, the prompt and
 * `current_time`), and one wall-clock formatter per zone. Building an `Intl.DateTimeFormat` costs
 * far more than using one, and every run's system prompt needs one (docs/performance.md, "CPU per
 * turn"), so formatters are kept per isolate, bounded.
 */
import { setBounded } from "./memo.ts";
const MAX_ZONES = 64;
const formatters = new Map<string, Intl.DateTimeFormat | null>();

/** The wall-clock formatter for `tz` (date, time, weekday and offset parts), or null for an unknown zone. */
export function wallClockFormatter(tz: string): Intl.DateTimeFormat | null {
  const known = formatters.get(tz);
  if (known !== undefined) return known;
  let formatter: Intl.DateTimeFormat | null;
  try {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      weekday: "long",
      timeZoneName: "longOffset",
    });
  } catch {
    formatter = null;
  }
  setBounded(formatters, tz, formatter, MAX_ZONES);
  return formatter;
}

export function isTimeZone(tz: string): boolean {
  return wallClockFormatter(tz) !== null;
}
