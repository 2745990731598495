// A builtin skill's files open like any other skill's (docs/console.md, Skills): the version label
// `builtin` of GET /api/skills/:name/versions/:version/file reads the bundled file.
import { describe, expect, it } from "vitest";
import { call, newWorkspace } from "../../support/api.ts";
import { BUILTIN_SKILLS } from "../../../skills/index.ts";

describe("builtin skill files", () => {
  it("reads a builtin skill's file under the label `builtin`; an unknown path or skill is 404", async () => {
    const ws = await newWorkspace();
    const skill = BUILTIN_SKILLS[0]!;
    const [path, text] = Object.entries(skill.files)[0]!;
    const res = await call("GET", `/api/skills/${skill.name}/versions/builtin/file?path=${encodeURIComponent(path)}`, { token: ws.read });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/plain");
    expect(await res.text()).toBe(text);
    expect((await call("GET", `/api/skills/${skill.name}/versions/builtin/file?path=nope.md`, { token: ws.read })).status).toBe(404);
    expect((await call("GET", `/api/skills/no-such-skill/versions/builtin/file?path=SKILL.md`, { token: ws.read })).status).toBe(404);
  });
});
