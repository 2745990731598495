// Builds the console (Preact, no Vite plugin: JSX through Vite's own transform) into console/dist, which
// wrangler.toml's [assets] serves (docs/console.md). Everything is bundled: the page loads nothing from
// any other host.
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  resolve: { alias: { react: "preact/compat", "react-dom": "preact/compat" } },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, target: "es2022", chunkSizeWarningLimit: 600 },
  logLevel: "warn",
});
