import { describe, expect, it } from "vitest";
import { checkAgainstSwagger, operationOf } from "../../support/swagger-check.ts";
import { GITEA_SWAGGER } from "../../support/swagger.ts";

const check = (method: string, path: string, body: unknown = null, query: Record<string, string> = {}) =>
  checkAgainstSwagger(GITEA_SWAGGER, { method, path: `/api/v1${path}`, query, body });

describe("the swagger checker itself (so a passing conformance test means something)", () => {
  it("accepts real calls and picks the most specific template", () => {
    expect(check("GET", "/repos/o/r/pulls/7.diff")).toEqual([]);
    expect(operationOf(GITEA_SWAGGER, { method: "GET", path: "/api/v1/repos/o/r/pulls/7.diff" })).toBe(
      "GET /repos/{owner}/{repo}/pulls/{index}.{diffType}",
    );
    expect(check("POST", "/repos/o/r/pulls/7/merge", { Do: "merge" })).toEqual([]);
    expect(check("GET", "/repos/o/r/contents/src/deep/file.ts", null, { ref: "main" })).toEqual([]);
    expect(
      check("POST", "/repos/o/r/contents", {
        branch: "b",
        message: "m",
        files: [{ operation: "update", path: "a", content: "eA==", sha: "1" }],
      }),
    ).toEqual([]);
  });

  it("rejects made-up paths, methods, parameters and fields", () => {
    expect(check("GET", "/repos/o/r/pulls/7/files/extra")[0]).toContain("no such operation");
    expect(check("PUT", "/repos/o/r/pulls/7/merge")[0]).toContain("no such operation");
    expect(check("GET", "/repos/o/r/pulls/seven")).toEqual(expect.arrayContaining([expect.stringContaining("not an integer")]));
    expect(check("GET", "/repos/o/r/pulls/7.zip")).toEqual(expect.arrayContaining([expect.stringContaining("diffType")]));
    expect(check("GET", "/repos/o/r/pulls/7/files", null, { per_page: "5" })[0]).toContain("query parameter per_page");
    expect(check("POST", "/repos/o/r/pulls/7/merge", { do: "merge" })).toEqual(
      expect.arrayContaining([
        expect.stringContaining("body.do: not a documented field"),
        expect.stringContaining("body.Do: required field missing"),
      ]),
    );
    expect(check("POST", "/repos/o/r/pulls/7/merge", { Do: "yolo" })[0]).toContain("not one of");
    expect(check("POST", "/repos/o/r/issues/7/comments", { body: 5 })[0]).toContain("expected a string");
    expect(check("POST", "/repos/o/r/contents", { files: [{ operation: "rename", path: "a" }] })[0]).toContain("not one of");
    expect(check("GET", "/other/api")[0]).toContain("no such operation");
    expect(checkAgainstSwagger(GITEA_SWAGGER, { method: "GET", path: "/v2/repos", query: {}, body: null })[0]).toContain("outside /api/v1");
  });
});
