import { describe, expect, it } from "vitest";
import { claimedDigests, verifySignature } from "../../../src/domains/gitea/signature.ts";
import { hmacSha256Hex } from "../../../src/kernel/hash.ts";

const body = new TextEncoder().encode('{"action":"opened"}');

describe("webhook signature", () => {
  it("accepts X-Gitea-Signature and X-Hub-Signature-256 (any hex case)", async () => {
    const hex = await hmacSha256Hex("s3cret", body);
    expect(await verifySignature("s3cret", body, { giteaSignature: hex, hubSignature256: null })).toBe(true);
    expect(await verifySignature("s3cret", body, { giteaSignature: null, hubSignature256: `sha256=${hex}` })).toBe(true);
    expect(await verifySignature("s3cret", body, { giteaSignature: hex.toUpperCase(), hubSignature256: null })).toBe(true);
  });

  it("rejects a missing, wrong, truncated or other-secret signature, and a changed body", async () => {
    const hex = await hmacSha256Hex("s3cret", body);
    expect(await verifySignature("s3cret", body, { giteaSignature: null, hubSignature256: null })).toBe(false);
    expect(await verifySignature("s3cret", body, { giteaSignature: hex.slice(0, 40), hubSignature256: null })).toBe(false);
    expect(await verifySignature("other", body, { giteaSignature: hex, hubSignature256: null })).toBe(false);
    expect(
      await verifySignature("s3cret", new TextEncoder().encode('{"action":"closed"}'), { giteaSignature: hex, hubSignature256: null }),
    ).toBe(false);
    expect(await verifySignature("s3cret", body, { giteaSignature: null, hubSignature256: hex })).toBe(false);
    // One bad header does not hide a good one, and a good one does not excuse nothing.
    expect(await verifySignature("s3cret", body, { giteaSignature: "00", hubSignature256: `sha256=${hex}` })).toBe(true);
  });

  it("reads the claims from both headers", () => {
    expect(claimedDigests({ giteaSignature: " AB ", hubSignature256: "sha256=CD" })).toEqual(["ab", "cd"]);
    expect(claimedDigests({ giteaSignature: "", hubSignature256: "md5=ab" })).toEqual([]);
  });
});
