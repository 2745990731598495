/**
 * Stands in for `he` in the deployed bundle (wrangler.toml `[alias]`, docs/performance.md "The
 * bundle"). node-html-parser (under node-html-markdown, the web fetch tool's HTML converter) decodes
 * text and attribute values with `he`, while its css-select dependency already brings `entities`,
 * fb55's decoder of the same HTML5 character-reference rules: two copies of the 2,231 named references
 * in one bundle. `decodeHTML` is the spec's "consume a character reference" in text, as `he.decode`
 * without options (legacy names without a semicolon, numeric references mapped per spec); `he.encode`
 * only serves node-html-parser's `textContent` setter, which the converter never calls, and
 * `encodeXML` escapes the same characters as `he.encode` (markup by name where he writes hex, non-ASCII as hex).
 */
import { decodeHTML, encodeXML } from "entities";

export const decode = (text: string): string => decodeHTML(text);
export const encode = (text: string): string => encodeXML(text);
// node-html-parser is CommonJS and reads both `require("he").decode` and `require("he").default.decode`.
export default { decode, encode };
