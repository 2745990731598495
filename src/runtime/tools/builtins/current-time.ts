/**
 * `current_time`: the current time in UTC and in a time zone (the one asked for, else the
 * workspace's), so the model never has to guess the date from its training data.
 */
import { z } from "zod";
import { loadConfig } from "../../../storage/config/store.ts";
import { defineTool, ok } from "../spec.ts";
import { isTimeZone } from "../../../kernel/time-zone.ts";
import { describeTime } from "./time-format.ts";

export const currentTimeTool = defineTool({
  name: "current_time",
  description:
    "Get the current date and time in UTC and as local time. Optionally pass an IANA time zone (e.g. Europe/Berlin); " +
    "otherwise the workspace's time zone is used.",
  input: z.strictObject({
    timezone: z.string().refine(isTimeZone, "must be an IANA time zone such as Europe/Berlin").optional().describe("IANA time zone name"),
  }),
  idempotent: true,
  readOnly: true,
  async execute({ timezone }, ctx) {
    const tz = timezone ?? ctx.timezone ?? (await loadConfig(ctx.env, ctx.workspaceId)).runtime.timezone;
    const t = describeTime(new Date(), tz);
    return ok([`utc: ${t.utc}`, `local: ${t.local} (${t.weekday})`, `timezone: ${t.timezone} (UTC${t.offset})`].join("\n"));
  },
});
