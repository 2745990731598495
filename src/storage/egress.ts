/**
 * The egress policy (README "Egress policy"): whether Beaver may send HTTP to a URL a tenant chose.
 * A tenant-chosen URL (a model's `base_url`, `toolchain.gitea_base_url`; later MCP servers, web
 * fetch) must not reach loopback, private networks, link-local or cloud metadata addresses, or
 * Beaver itself — otherwise a workspace admin could scan the operator's network through the error
 * texts of runs. The check is pure: `checkEgress(url, egressPolicy(env, selfHost))` answers with a
 * reason for every refusal. It runs when a URL is saved (edge routes) and again on every request
 * and redirect hop (storage/outbound.ts). IPv4 is read in every spelling the WHATWG URL parser
 * accepts (decimal, hex, octal, short forms), IPv6 with its IPv4-embedding forms (mapped,
 * compatible, NAT64, 6to4). Names are judged by their spelling only: the Worker cannot resolve DNS,
 * so a public name that resolves to a private address is the egress proxy's to stop (`OUTBOUND`).
 */
import { AppError, type IssueDetail } from "../kernel/errors.ts";
import type { Env } from "./env.ts";

export interface EgressPolicy {
  /**
   * Loopback, private (RFC 1918, fc00::/7), carrier-grade NAT and local names (`localhost`,
   * `*.local`, single-label) are allowed: the operator switch `BEAVER_ALLOW_PRIVATE_EGRESS=true`, for
   * local model servers. Link-local, metadata, multicast and reserved addresses stay refused.
   */
  allowPrivate: boolean;
  /** Beaver's own host (`host[:port]` as in a request URL): never a target. */
  selfHosts: readonly string[];
}

export type EgressCategory =
  | "invalid"
  | "scheme"
  | "self"
  | "loopback"
  | "private"
  | "cgnat"
  | "link-local"
  | "metadata"
  | "unspecified"
  | "multicast"
  | "broadcast"
  | "reserved";

export type EgressVerdict = { allowed: true; url: URL } | { allowed: false; category: EgressCategory; reason: string };

/** Categories the operator switch allows; everything else is refused regardless. */
const PRIVATE_CATEGORIES: ReadonlySet<EgressCategory> = new Set(["loopback", "private", "cgnat"]);

/** The policy of this Worker: the operator switch, plus Beaver's own host when known (an incoming request's). */
export function egressPolicy(env: Pick<Env, "BEAVER_ALLOW_PRIVATE_EGRESS">, selfHost?: string): EgressPolicy {
  const flag: unknown = env.BEAVER_ALLOW_PRIVATE_EGRESS;
  return { allowPrivate: flag === true || flag === "true", selfHosts: selfHost ? [selfHost.toLowerCase()] : [] };
}

/** May Beaver send a request to `url`? Refusals carry a reason such as `loopback address 127.0.0.1`. */
export function checkEgress(url: string | URL, policy: EgressPolicy): EgressVerdict {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    return { allowed: false, category: "invalid", reason: "not a valid URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { allowed: false, category: "scheme", reason: `scheme ${parsed.protocol} (only http and https)` };
  }
  const host = classifyHost(parsed.hostname);
  if (host !== null && !(policy.allowPrivate && PRIVATE_CATEGORIES.has(host.category))) {
    return { allowed: false, category: host.category, reason: host.reason };
  }
  if (isSelf(parsed, host, policy)) return { allowed: false, category: "self", reason: `Beaver's own host ${parsed.host}` };
  return { allowed: true, url: parsed };
}

/** `checkEgress` that throws `egress_refused` (HTTP 422), its message prefixed with `where` (a field path). */
export function assertEgress(url: string | URL, policy: EgressPolicy, where?: string): URL {
  const verdict = checkEgress(url, policy);
  if (verdict.allowed) return verdict.url;
  const message = `${where ? `${where}: ` : ""}refused: ${verdict.reason}`;
  throw new AppError("egress_refused", message, { details: [{ path: where ?? "url", message: `refused: ${verdict.reason}` }] });
}

/** Keys whose string values are URLs Beaver will fetch: `url`, `base_url`, `gitea_base_url`, … */
const URL_KEY = /(^|_)url$/i;

/**
 * Every URL stored in `value` (a configuration or an agent body, walked to any depth: each string
 * under a key ending in `url`) that the policy refuses, with its dotted path.
 */
export function refusedUrlFields(value: unknown, policy: EgressPolicy, prefix = ""): IssueDetail[] {
  const out: IssueDetail[] = [];
  const walk = (v: unknown, path: string[]): void => {
    if (Array.isArray(v)) v.forEach((item, i) => walk(item, [...path, String(i)]));
    else if (v !== null && typeof v === "object") {
      for (const [key, child] of Object.entries(v)) {
        if (typeof child === "string" && URL_KEY.test(key)) {
          const verdict = checkEgress(child, policy);
          if (!verdict.allowed) out.push({ path: [...path, key].join("."), message: `refused: ${verdict.reason}` });
        } else walk(child, [...path, key]);
      }
    }
  };
  walk(value, prefix ? [prefix] : []);
  return out;
}

/** Throws `egress_refused` naming the first refused URL field of `value` (all of them in `details`). */
export function assertUrlFields(value: unknown, policy: EgressPolicy, prefix = ""): void {
  const refused = refusedUrlFields(value, policy, prefix);
  const first = refused[0];
  if (first) throw new AppError("egress_refused", `${first.path}: ${first.message}`, { details: refused });
}

function isSelf(url: URL, host: HostClass | null, policy: EgressPolicy): boolean {
  for (const self of policy.selfHosts) {
    let own: URL;
    try {
      own = new URL(`http://${self}`);
    } catch {
      continue;
    }
    if (own.hostname.replace(/\.$/, "") !== url.hostname.replace(/\.$/, "")) continue;
    // Local development runs Beaver and the servers it talks to on one loopback address: there
    // (and only there) the port tells them apart. Elsewhere any port of Beaver's name is Beaver.
    const localSelf = policy.allowPrivate && host !== null && PRIVATE_CATEGORIES.has(host.category);
    if (!localSelf || own.port === url.port) return true;
  }
  return false;
}

// ---- Host classification -------------------------------------------------------------------------

export interface HostClass {
  category: Exclude<EgressCategory, "invalid" | "scheme" | "self">;
  reason: string;
}

const LABEL: Record<HostClass["category"], string> = {
  loopback: "loopback address",
  private: "private address",
  cgnat: "carrier-grade NAT address",
  "link-local": "link-local address",
  metadata: "cloud metadata address",
  unspecified: "unspecified address",
  multicast: "multicast address",
  broadcast: "broadcast address",
  reserved: "reserved address",
};

const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"]);

/**
 * What a URL's hostname points at: null for a public address or name, else the category and a
 * reason. Accepts a WHATWG-normalised hostname (`127.0.0.1`, `[::1]`) and the raw spellings too.
 */
export function classifyHost(hostname: string): HostClass | null {
  let host = hostname.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = parseIPv6(host.slice(1, -1));
    return groups ? classifyIPv6(groups) : { category: "reserved", reason: `unreadable IPv6 address ${host}` };
  }
  if (host.includes(":")) {
    const groups = parseIPv6(host);
    if (groups) return classifyIPv6(groups);
  }
  if (host.endsWith(".") && host.length > 1) host = host.slice(0, -1);
  const v4 = parseIPv4(host);
  if (v4 !== null) return classifyIPv4(v4);
  return classifyName(host);
}

function classifyName(host: string): HostClass | null {
  if (host === "") return { category: "unspecified", reason: "empty host" };
  if (METADATA_NAMES.has(host)) return { category: "metadata", reason: `cloud metadata host ${host}` };
  if (host === "localhost" || host.endsWith(".localhost") || host === "localhost.localdomain") {
    return { category: "loopback", reason: `loopback host ${host}` };
  }
  if (!host.includes(".")) return { category: "private", reason: `single-label (intranet) host ${host}` };
  for (const suffix of [".local", ".internal", ".localdomain", ".home.arpa", ".lan", ".intranet"]) {
    if (host.endsWith(suffix)) return { category: "private", reason: `local network host ${host}` };
  }
  return null;
}

// ---- IPv4 ----------------------------------------------------------------------------------------

/**
 * An IPv4 address in any spelling the WHATWG URL host parser accepts, as an unsigned 32-bit number:
 * one to four parts, each decimal, hex (`0x7f`) or octal (`0177`); the last part fills the
 * remaining bytes (`127.1`, `2130706433`); one trailing dot allowed. Null when `text` is a name.
 */
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length === 0 || parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIPv4Part(part);
    if (n === null) return null;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255)) return null;
  if (last >= 256 ** (4 - numbers.length)) return null;
  let value = 0;
  numbers.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return value + last;
}

function parseIPv4Part(part: string): number | null {
  if (part === "") return null;
  let digits = part;
  let radix = 10;
  if (/^0x/i.test(part)) {
    digits = part.slice(2);
    radix = 16;
    if (digits === "") return 0;
  } else if (part.length > 1 && part.startsWith("0")) {
    digits = part.slice(1);
    radix = 8;
  }
  const valid = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return null;
  const n = parseInt(digits, radix);
  return Number.isSafeInteger(n) ? n : null;
}

export function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

type Range = [base: string, bits: number, category: HostClass["category"]];

/** Checked in order: the first match wins (metadata before link-local, broadcast before 240/4). */
const IPV4_RANGES: readonly Range[] = [
  ["169.254.169.254", 32, "metadata"],
  ["100.100.100.200", 32, "metadata"],
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  ["255.255.255.255", 32, "broadcast"],
  ["240.0.0.0", 4, "reserved"],
];

const IPV4_TABLE = IPV4_RANGES.map(([base, bits, category]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { net: (parseIPv4(base)! & mask) >>> 0, mask, category };
});

function classifyIPv4(n: number, shown = formatIPv4(n)): HostClass | null {
  for (const { net, mask, category } of IPV4_TABLE) {
    if ((n & mask) >>> 0 === net) return { category, reason: `${LABEL[category]} ${shown}` };
  }
  return null;
}

// ---- IPv6 ----------------------------------------------------------------------------------------

/** Eight 16-bit groups of an IPv6 address (`::` compression and a dotted IPv4 tail allowed), or null. */
export function parseIPv6(text: string): number[] | null {
  if (text.includes("%")) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const side = (s: string): number[] | null => {
    if (s === "") return [];
    const out: number[] = [];
    const pieces = s.split(":");
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(piece) ? parseIPv4(piece) : null;
        if (v4 === null || piece.split(".").some((p) => Number(p) > 255 || (p.length > 1 && p.startsWith("0")))) return null;
        out.push(v4 >>> 16, v4 & 0xffff);
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(piece)) return null;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = side(halves[0]!);
  if (!head) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const tail = side(halves[1]!);
  if (!tail || head.length + tail.length > 7) return null;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

function formatIPv6(g: readonly number[]): string {
  // Shortest form is not needed for a reason string; compress the longest zero run for readability.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLen).join(":")}`;
}

const zero = (g: readonly number[], from: number, to: number) => g.slice(from, to).every((x) => x === 0);

function classifyIPv6(g: number[]): HostClass | null {
  const shown = formatIPv6(g);
  const as = (category: HostClass["category"]): HostClass => ({ category, reason: `${LABEL[category]} ${shown}` });
  const embedded = (hi: number, lo: number): HostClass | null => {
    const v4 = ((hi << 16) >>> 0) + lo;
    return classifyIPv4(v4, `${shown} (${formatIPv4(v4)})`);
  };
  if (zero(g, 0, 8)) return as("unspecified");
  if (zero(g, 0, 7) && g[7] === 1) return as("loopback");
  if (shown === "fd00:ec2::254") return as("metadata");
  // IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d.
  if (zero(g, 0, 5) && g[5] === 0xffff) return embedded(g[6]!, g[7]!);
  if (zero(g, 0, 4) && g[4] === 0xffff && g[5] === 0) return embedded(g[6]!, g[7]!);
  if (zero(g, 0, 6)) return embedded(g[6]!, g[7]!);
  // NAT64 well-known prefix 64:ff9b::/96 carries an IPv4 address; the local-use 64:ff9b:1::/48 is private.
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(g, 2, 6)) return embedded(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return as("private");
  // 6to4 2002:AABB:CCDD::/48 routes to the IPv4 address AA.BB.CC.DD.
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!);
  if (g[0] === 0x2001 && (g[1] === 0 || g[1] === 0xdb8)) return as("reserved"); // Teredo, documentation
  if (g[0] === 0x100 && zero(g, 1, 4)) return as("reserved"); // discard-only 100::/64
  if ((g[0]! & 0xfe00) === 0xfc00) return as("private"); // unique local fc00::/7
  if ((g[0]! & 0xffc0) === 0xfe80) return as("link-local");
  if ((g[0]! & 0xffc0) === 0xfec0) return as("private"); // deprecated site-local
  if ((g[0]! & 0xff00) === 0xff00) return as("multicast");
  if ((g[0]! & 0xe000) !== 0x2000) return as("reserved"); // outside global unicast 2000::/3
  return null;
}
