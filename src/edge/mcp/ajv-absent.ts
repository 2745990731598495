/**
 * Stands in for `ajv` and `ajv-formats` in the deployed bundle (wrangler.toml `[alias]`,
 * docs/performance.md "The bundle"). The MCP SDK's Client and Server import their default AJV
 * validator statically, but Beaver always passes the Worker-friendly `CfWorkerJsonSchemaValidator`
 * (src/edge/mcp/server.ts, src/domains/mcp/connection.ts), so AJV's 0.4 MB were bundled and never run.
 * Constructing it here is a bug in our wiring, and says so rather than validating nothing.
 */
export default class AjvAbsent {
  constructor() {
    throw new Error("ajv is not bundled: pass jsonSchemaValidator: new CfWorkerJsonSchemaValidator() to the MCP SDK");
  }
}
