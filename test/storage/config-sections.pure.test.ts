// Config sections are derived once per config object and shared read-only (kernel/memo.ts,
// docs/performance.md "Config sections"): the same object gives the same parsed section, another
// object (another stored text) its own, and nobody can change what the others read.
import { describe, expect, it } from "vitest";
import { deepFreeze, memoByObject, setBounded } from "../../src/kernel/memo.ts";
import { DEFAULT_CONFIG, type WorkspaceConfig } from "../../src/storage/config/schema.ts";
import { toolchainConfigOf } from "../../src/domains/toolchain/config.ts";
import { mcpConfigOf } from "../../src/domains/mcp/config.ts";
import { toolPolicyOf } from "../../src/runtime/tools/policy.ts";

describe("memoByObject", () => {
  it("derives once per object and again for another object", () => {
    let calls = 0;
    const sizeOf = memoByObject((o: { items: number[] }) => {
      calls++;
      return o.items.length;
    });
    const a = { items: [1, 2] };
    expect([sizeOf(a), sizeOf(a), sizeOf({ items: [1] })]).toEqual([2, 2, 1]);
    expect(calls).toBe(2);
  });

  it("remembers undefined and null results too", () => {
    let calls = 0;
    const none = memoByObject((_: object) => {
      calls++;
      return null;
    });
    const key = {};
    none(key);
    none(key);
    expect(calls).toBe(1);
  });
});

describe("setBounded", () => {
  it("keeps at most `max` entries, dropping the least recently set, and moves a re-set key to the newest", () => {
    const m = new Map<string, number>();
    setBounded(m, "a", 1, 2);
    setBounded(m, "b", 2, 2);
    setBounded(m, "a", 3, 2); // a is now the newest
    setBounded(m, "c", 4, 2); // b goes
    expect([...m]).toEqual([
      ["a", 3],
      ["c", 4],
    ]);
  });
});

describe("deepFreeze", () => {
  it("freezes nested objects and arrays so a write throws", () => {
    const v = deepFreeze({ a: { b: [1, { c: 2 }] } });
    expect(Object.isFrozen(v.a.b[1])).toBe(true);
    expect(() => {
      (v.a.b as unknown[]).push(3);
    }).toThrow(TypeError);
  });
});

describe("config sections", () => {
  const withToolchain = (toolchain: unknown): WorkspaceConfig => deepFreeze({ ...DEFAULT_CONFIG, toolchain } as WorkspaceConfig);

  it("the same config object gives the same section; another config its own", () => {
    const one = withToolchain({ deploy_pattern: "^ship" });
    const two = withToolchain({ deploy_pattern: "^release" });
    expect(toolchainConfigOf(one)).toBe(toolchainConfigOf(one));
    expect(toolchainConfigOf(one).deploy_pattern).toBe("^ship");
    expect(toolchainConfigOf(two).deploy_pattern).toBe("^release");
    expect(toolchainConfigOf(DEFAULT_CONFIG).deploy_pattern).toBe("^deploy");
  });

  it("shared sections and the default config cannot be changed by a reader", () => {
    expect(Object.isFrozen(DEFAULT_CONFIG)).toBe(true);
    const toolchain = toolchainConfigOf(withToolchain({}));
    expect(() => {
      (toolchain.retry as { max_attempts: number }).max_attempts = 9;
    }).toThrow(TypeError);
    expect(() => {
      (mcpConfigOf(DEFAULT_CONFIG).servers as unknown[]).push({});
    }).toThrow(TypeError);
    expect(Object.isFrozen(toolPolicyOf(DEFAULT_CONFIG))).toBe(true);
  });
});
