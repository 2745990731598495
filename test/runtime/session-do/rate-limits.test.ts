/**
 * Request rate limits (docs/limits.md) through the real Rate Limiting bindings, with the small test
 * limits of vitest.config.ts: past a token's limit the message route answers 429 `rate_limited` with
 * Retry-After; the workspace limit is shared by its tokens; another workspace is unaffected; webhook
 * deliveries are limited per workspace. Counters are per wall-clock window, so a hammer may straddle
 * a window edge: each loop sends up to twice the limit and expects the 429 within it.
 */
import { describe, expect, it } from "vitest";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { TEST_RATE_LIMITS } from "../../support/rate-limits.ts";

type ErrorJson = { error: { code: string; details?: Record<string, unknown> } };

/** A message to a session that does not exist: rate limiting comes first, the run itself is not the point. */
const message = (token: string) => call("POST", "/api/sessions/ses_absent/messages", { token, body: { content: "hi" } });

/** Sends until the first 429 (at most `max` requests); returns how many were let through and the 429. */
async function hammer(send: () => Promise<Response>, max: number): Promise<{ passed: number; limited: Response | null }> {
  for (let passed = 0; passed < max; passed++) {
    const res = await send();
    if (res.status === 429) return { passed, limited: res };
    expect(res.status).toBe(404);
  }
  return { passed: max, limited: null };
}

async function expectRateLimited(res: Response | null, scope: string) {
  expect(res?.status).toBe(429);
  expect(res!.headers.get("Retry-After")).toBe("60");
  const body = await json<ErrorJson>(res!);
  expect(body.error).toMatchObject({ code: "rate_limited", details: { scope } });
}

async function addToken(ws: TestWorkspace): Promise<string> {
  const res = await call("POST", "/api/tokens", { token: ws.admin, body: { name: "second", scopes: ["member"] } });
  return (await json<{ token: string }>(res)).token;
}

describe("rate limits (docs/limits.md)", () => {
  it("hammering the message route past the token's limit answers 429 with Retry-After", async () => {
    const ws = await newWorkspace();
    const { passed, limited } = await hammer(() => message(ws.member), 2 * TEST_RATE_LIMITS.token + 1);
    expect(passed).toBeGreaterThanOrEqual(TEST_RATE_LIMITS.token);
    await expectRateLimited(limited, "token");
    // Chat starts runs too: the same token is limited there.
    await expectRateLimited(await call("POST", "/api/chat", { token: ws.member, body: { message: "hi" } }), "token");
  });

  it("the workspace limit applies across two tokens of one workspace; another workspace is unaffected", async () => {
    const ws = await newWorkspace();
    const second = await addToken(ws);
    const first = await hammer(() => message(ws.member), TEST_RATE_LIMITS.token - 1);
    expect(first.limited).toBeNull();
    // The second token is far from its own limit, but the workspace's is shared.
    const { passed, limited } = await hammer(() => message(second), 2 * TEST_RATE_LIMITS.workspace);
    expect(passed).toBeLessThan(TEST_RATE_LIMITS.token);
    await expectRateLimited(limited, "workspace");

    const other = await newWorkspace();
    expect((await message(other.member)).status).toBe(404);
  });

  it("webhook deliveries are limited per workspace, before the signature is checked", async () => {
    const ws = await newWorkspace();
    const hook = (id: string) =>
      call("POST", `/webhooks/gitea/${id}`, { token: null, rawBody: "{}", headers: { "X-Gitea-Event-Type": "issues" } });
    // In batches of concurrent requests: the webhook's test limit is in the hundreds.
    let limited: Response | null = null;
    for (let sent = 0; sent < 2 * TEST_RATE_LIMITS.webhook + 1 && !limited; sent += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => hook(ws.id)));
      for (const res of answers) expect([401, 429]).toContain(res.status);
      limited = answers.find((res) => res.status === 429) ?? null;
    }
    await expectRateLimited(limited, "webhook");
    expect((await hook((await newWorkspace()).id)).status).toBe(401);
  });
});
