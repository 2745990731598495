/**
 * The part of zip.js that Beaver uses (reading), loaded by zip.ts with a dynamic `import()`. A dynamic
 * import of zip.js itself hands back its whole namespace, so the bundler kept every export (the writer,
 * the other readers and writers); importing the names here lets it drop the rest
 * (docs/performance.md, "The bundle").
 */
export { ZipReader, Uint8ArrayReader, configure } from "@zip.js/zip.js/lib/zip-core-native.js";
