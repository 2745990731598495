/** Whether the runtime knows an IANA time zone name (shared by the config schema, the prompt and `current_time`). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
