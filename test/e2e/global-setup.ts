/**
 * Starts the services the e2e suite talks to — the scripted model server, the fake Gitea, and one
 * `wrangler dev` pointed at them — and hands their addresses to the tests with `provide`.
 */
import type { TestProject } from "vitest/node";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.ts";
import { startScriptedModelServer, type ScriptedModelServer } from "../support/scripted-openai.ts";
import { startFakeGiteaServer, type FakeGiteaServer } from "../support/fake-gitea.ts";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminToken: string;
    /** Scripted OpenAI-compatible server (test/support/scripted-openai.ts); base_url is `${modelUrl}/v1`. */
    modelUrl: string;
    /** Fake Gitea (test/support/fake-gitea.ts); drive it with `fakeGiteaControl(giteaUrl)`. */
    giteaUrl: string;
  }
}

let dev: DevServer | undefined;
let model: ScriptedModelServer | undefined;
let gitea: FakeGiteaServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  model = await startScriptedModelServer();
  project.provide("modelUrl", model.url);
  gitea = await startFakeGiteaServer();
  project.provide("giteaUrl", gitea.url);
  dev = await startWranglerDev();
  project.provide("baseUrl", dev.url);
  project.provide("adminToken", dev.adminToken);
}

export async function teardown(): Promise<void> {
  await dev?.stop();
  await model?.stop();
  await gitea?.stop();
}
