/**
 * Which package (or, for Beaver's own code, which layer) a source map source belongs to: the unit
 * both bundle reports count by (bench/bundle.ts: bytes; bench/startup-sources.ts: startup time).
 */
/** The package (or, for Beaver's own code, the layer) a source map source belongs to. */
export function ownerOf(source: string): string {
  const fromGithub = /^https:\/\/raw\.githubusercontent\.com\/[^/]+\/([^/]+)/.exec(source);
  if (fromGithub) return fromGithub[1]!; // fb55's packages (entities, domutils…) map to their repository
  // drizzle-orm's maps name `../src/*.ts` beside its package directory, so they land in node_modules/src/.
  if (source.includes("node_modules/src/")) return "drizzle-orm";
  const pkgs = source.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g);
  if (pkgs) {
    const name = pkgs[pkgs.length - 1]!.replace("node_modules/", "");
    return pkgs.length > 1 ? `${name} (nested)` : name;
  }
  const own = /(?:^|\/)((?:src|skills)\/[^/]+)/.exec(source);
  return own ? own[1]! : source;
}
