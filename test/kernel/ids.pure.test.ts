/**
 * Ids and tokens (src/kernel/ids.ts) draw every character with the same probability: fed every byte
 * value once, each of the 36 characters comes out exactly 7 times (the 4 bytes from 252 up are drawn
 * again) — `byte % 36` would give `0`–`3` eight each. And the real source reaches every character.
 */
import { describe, expect, it } from "vitest";
import { newId, randomToken, tokenFrom } from "../../src/kernel/ids.ts";

/** A byte source that hands out 0, 1, …, 255, 0, 1, … in order. */
function counting(): (bytes: Uint8Array) => void {
  let next = 0;
  return (bytes) => {
    for (let i = 0; i < bytes.length; i++) bytes[i] = next++ % 256;
  };
}

describe("random tokens", () => {
  it("map the 252 accepted byte values evenly onto the 36 characters and draw the rest again", () => {
    const token = tokenFrom(252, counting());
    const counts = new Map<string, number>();
    for (const ch of token) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(36);
    expect([...counts.values()].every((n) => n === 7)).toBe(true);
  });

  it("skips rejected bytes without losing length", () => {
    // Only bytes ≥ 252 at first: all rejected, then 0 ('0') and 35 ('z') and 71 ('z').
    const draws = [
      [252, 253, 254, 255],
      [0, 35, 71, 255],
    ];
    let call = 0;
    const token = tokenFrom(3, (bytes) => {
      const draw = draws[Math.min(call++, draws.length - 1)]!;
      bytes.fill(255);
      bytes.set(draw.slice(0, bytes.length));
    });
    expect(token).toBe("0zz");
    expect(call).toBe(2);
  });

  it("reaches every character from the platform's source, with the asked length", () => {
    const seen = new Set(randomToken(4_000));
    expect(seen.size).toBe(36);
    expect(randomToken(7)).toMatch(/^[0-9a-z]{7}$/);
    expect(newId("ses")).toMatch(/^ses_[0-9a-z]{20}$/);
  });
});
