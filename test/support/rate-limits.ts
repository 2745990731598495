// The in-worker tests' Rate Limiting binding limits (vitest.config.ts), shared with the tests that reach them.
export const TEST_RATE_LIMITS = { token: 10, workspace: 15, webhook: 20 } as const;
