/**
 * The modules wrangler.toml's `[alias]` puts in the deployed bundle in place of a package
 * (src/edge/bundle/, docs/performance.md "The bundle"). The aliases apply to wrangler's bundle only,
 * so these tests import the stand-ins directly; the e2e files run the aliased Worker itself.
 */
import { describe, expect, it } from "vitest";
import he from "../../src/edge/bundle/he-from-entities.ts";
import { decode } from "../../src/edge/bundle/he-from-entities.ts";
import { en } from "../../src/edge/bundle/zod-locales.ts";
import { object, zodToJsonSchema } from "../../src/edge/bundle/zod-v3-absent.ts";
import { createGateway, gateway, GatewayAuthenticationError, GatewayError } from "../../src/edge/bundle/ai-gateway-absent.ts";

/**
 * Inputs and what `he.decode` (he 1.2.0, the package replaced) answers for each, taken from he itself:
 * named references with and without the semicolon, legacy prefixes, numeric references the spec maps
 * or replaces, and text that only looks like a reference.
 */
const HE_ANSWERS: [string, string][] = [
  ["a &amp; b", "a & b"],
  ["&copy 2024", "\u00A9 2024"],
  ["&copy2024", "\u00A92024"],
  ["&notit;", "\u00ACit;"],
  ["&notin;", "\u2209"],
  ["&#x1F600;", "\uD83D\uDE00"],
  ["&#0;", "\uFFFD"],
  ["&#x80;", "\u20AC"],
  ["&#xD800;", "\uFFFD"],
  ["&#1114112;", "\uFFFD"],
  ["&ampx", "&x"],
  ["&unknown;", "&unknown;"],
  ["&#;", "&#;"],
  ["?a=1&b=2&c", "?a=1&b=2&c"],
  ["&amp;amp;", "&amp;"],
  ["&#65&#66", "AB"],
  ["&NotNestedGreaterGreater;", "\u2AA2\u0338"],
  ["&acE;", "\u223E\u0333"],
];

describe("bundle stand-ins", () => {
  it("he: decodes every reference as he 1.2.0 does, under both ways node-html-parser reads it", () => {
    for (const [input, answer] of HE_ANSWERS) {
      expect(decode(input), input).toBe(answer);
      expect(he.decode(input), input).toBe(answer);
    }
    expect(decode(he.encode('<a href="x">© & ü</a>'))).toBe('<a href="x">© & ü</a>');
  });

  it("zod's locales keep English; zod 3 and the AI Gateway say they are not bundled", () => {
    expect(typeof en().localeError).toBe("function");
    expect(() => object()).toThrow(/zod 3 is not bundled/);
    expect(() => zodToJsonSchema()).toThrow(/zod 3 is not bundled/);
    expect(() => gateway.languageModel()).toThrow(/AI Gateway provider is not bundled/);
    expect(() => createGateway()).toThrow(/AI Gateway provider is not bundled/);
    expect(GatewayError.isInstance(new Error("x"))).toBe(false);
    expect(GatewayAuthenticationError.isInstance(new GatewayAuthenticationError())).toBe(false);
  });
});
