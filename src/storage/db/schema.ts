/**
 * The whole D1 schema, one module per area under ./schema/. drizzle-kit generates migrations/ from this.
 * Add a table in its area's module; never edit a migration that has landed.
 */
export * from "./schema/core.ts";
export * from "./schema/sessions.ts";
export * from "./schema/toolchain.ts";
export * from "./schema/skills.ts";
export * from "./schema/memory.ts";
export * from "./schema/receipts.ts";
