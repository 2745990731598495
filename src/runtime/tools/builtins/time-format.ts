/**
 * Renders one instant as UTC and as wall-clock time in an IANA zone. Shared by the `current_time`
 * tool and the system prompt's runtime context so both tell the model the same thing.
 */
import { wallClockFormatter } from "../../../kernel/time-zone.ts";

export interface TimeReport {
  utc: string;
  /** ISO 8601 local time with its offset, e.g. `2026-05-26T11:18:35+08:00`. */
  local: string;
  weekday: string;
  timezone: string;
  /** `+08:00`, `-05:00`, `+00:00`. */
  offset: string;
}

export function describeTime(now: Date, timezone: string): TimeReport {
  // Unknown zones are refused before they get here (config schema, tool input); UTC is the fallback.
  const parts = (wallClockFormatter(timezone) ?? wallClockFormatter("UTC")!).formatToParts(now);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  // `longOffset` renders "GMT+08:00", or plain "GMT" for a zero offset.
  const gmt = get("timeZoneName").replace(/^GMT/, "");
  const offset = gmt === "" ? "+00:00" : gmt;
  const local = `${get("year")}-${get("month")}-${get("day")}T${get("hour")}:${get("minute")}:${get("second")}${offset}`;
  return { utc: now.toISOString(), local, weekday: get("weekday"), timezone, offset };
}
