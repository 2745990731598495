/// <reference types="vite/client" />
/**
 * Gitea's API description (test/fixtures/upstream/gitea/swagger.v1.22.json) plus the newer Actions
 * operations `gitea_ci_logs` calls (test/fixtures/gitea/swagger.actions.json), loaded for in-worker tests.
 */
import text from "../fixtures/upstream/gitea/swagger.v1.22.json?raw";
import actionsText from "../fixtures/gitea/swagger.actions.json?raw";
import { checkAgainstSwagger, mergeSwagger, type SwaggerDoc } from "./swagger-check.ts";
import type { RecordedRequest } from "./fake-gitea.ts";

export const GITEA_SWAGGER = mergeSwagger(JSON.parse(text) as SwaggerDoc, JSON.parse(actionsText) as SwaggerDoc);

/** Problems of every recorded request, keyed by `METHOD path` (empty when all are real API calls). */
export function swaggerProblems(requests: RecordedRequest[]): string[] {
  return requests.flatMap((r) => checkAgainstSwagger(GITEA_SWAGGER, r));
}
