// The in-worker tests' Rate Limiting binding limits (vitest.config.ts), shared with the tests that reach them.
// The webhook's is higher: the intake tests send ~150 deliveries to one workspace within a minute.
export const TEST_RATE_LIMITS = { token: 10, workspace: 15, webhook: 250 } as const;
