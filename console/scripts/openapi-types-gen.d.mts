/** Types of openapi-types-gen.mjs (for the test that checks console/src/api/openapi.d.ts is current). */
export function openapiTypes(doc: unknown): string;
export function typeOf(schema: unknown, indent?: string): string;
