// drizzle-kit reads the schema to generate SQL migrations into migrations/ (applied by wrangler and tests).
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/storage/db/schema.ts",
  out: "./migrations",
});
