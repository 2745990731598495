/**
 * The whole D1 schema, one module per area under ./schema/. drizzle-kit generates migrations/ from this.
 * Add a table in its area's module and re-export it here; never edit a migration that has landed.
 */
export * from "./schema/core.ts";
