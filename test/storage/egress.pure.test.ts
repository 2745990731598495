/**
 * The egress policy as a pure function (README "Egress policy", src/storage/egress.ts): every
 * spelling of a loopback, private, link-local, metadata or reserved address is refused — through
 * the WHATWG URL parser and, for the raw spellings, by the module's own IPv4/IPv6 readers — while
 * public names and addresses pass, and the operator switch opens only loopback and private ranges.
 */
import { describe, expect, it } from "vitest";
import {
  assertEgress,
  checkEgress,
  classifyHost,
  egressPolicy,
  parseIPv4,
  parseIPv6,
  refusedUrlFields,
  type EgressCategory,
} from "../../src/storage/egress.ts";
import { AppError } from "../../src/kernel/errors.ts";

const strict = egressPolicy({});
const open = egressPolicy({ BEAVER_ALLOW_PRIVATE_EGRESS: "true" });

/** [URL, category refused with, address or name the reason names]. */
const REFUSED: [string, EgressCategory, string][] = [
  ["http://127.0.0.1/v1", "loopback", "127.0.0.1"],
  ["http://127.1/v1", "loopback", "127.0.0.1"],
  ["http://127.0.1/", "loopback", "127.0.0.1"],
  ["http://2130706433/", "loopback", "127.0.0.1"],
  ["http://0x7f000001/", "loopback", "127.0.0.1"],
  ["http://0x7f.0.0.1/", "loopback", "127.0.0.1"],
  ["http://0x7F.1/", "loopback", "127.0.0.1"],
  ["http://0177.0.0.1/", "loopback", "127.0.0.1"],
  ["http://017700000001/", "loopback", "127.0.0.1"],
  ["http://127.0.0.1./", "loopback", "127.0.0.1"],
  ["http://127.255.255.254:8080/", "loopback", "127.255.255.254"],
  ["http://[::1]/", "loopback", "::1"],
  ["http://[0:0:0:0:0:0:0:1]/", "loopback", "::1"],
  ["http://[::ffff:127.0.0.1]/", "loopback", "127.0.0.1"],
  ["http://[::ffff:7f00:1]/", "loopback", "127.0.0.1"],
  ["http://[::127.0.0.1]/", "loopback", "127.0.0.1"],
  ["http://[::ffff:0:127.0.0.1]/", "loopback", "127.0.0.1"],
  ["http://[64:ff9b::127.0.0.1]/", "loopback", "127.0.0.1"],
  ["http://[64:ff9b::a00:1]/", "private", "10.0.0.1"],
  ["http://[2002:c0a8:101::1]/", "private", "192.168.1.1"],
  ["http://localhost:8787/", "loopback", "localhost"],
  ["http://LOCALHOST/", "loopback", "localhost"],
  ["http://localhost./", "loopback", "localhost"],
  ["http://api.localhost/", "loopback", "api.localhost"],
  ["http://10.0.0.1/", "private", "10.0.0.1"],
  ["http://10.1/", "private", "10.0.0.1"],
  ["http://167772161/", "private", "10.0.0.1"],
  ["http://172.16.0.1/", "private", "172.16.0.1"],
  ["http://172.31.255.255/", "private", "172.31.255.255"],
  ["http://192.168.1.10/", "private", "192.168.1.10"],
  ["http://0xc0a8010a/", "private", "192.168.1.10"],
  ["http://[fc00::1]/", "private", "fc00::1"],
  ["http://[fd12:3456::1]/", "private", "fd12:3456::1"],
  ["http://[::ffff:192.168.0.1]/", "private", "192.168.0.1"],
  ["http://printer.local/", "private", "printer.local"],
  ["http://gitea.internal/", "private", "gitea.internal"],
  ["http://gitea/", "private", "gitea"],
  ["http://100.64.0.1/", "cgnat", "100.64.0.1"],
  ["http://100.127.255.254/", "cgnat", "100.127.255.254"],
  ["http://169.254.1.1/", "link-local", "169.254.1.1"],
  ["http://[fe80::1]/", "link-local", "fe80::1"],
  ["http://169.254.169.254/latest/meta-data/", "metadata", "169.254.169.254"],
  ["http://2852039166/", "metadata", "169.254.169.254"],
  ["http://0xa9fea9fe/", "metadata", "169.254.169.254"],
  ["http://0251.0376.0251.0376/", "metadata", "169.254.169.254"],
  ["http://[::ffff:169.254.169.254]/", "metadata", "169.254.169.254"],
  ["http://[fd00:ec2::254]/", "metadata", "fd00:ec2::254"],
  ["http://metadata.google.internal/computeMetadata/v1/", "metadata", "metadata.google.internal"],
  ["http://metadata.google.internal./", "metadata", "metadata.google.internal"],
  ["http://0.0.0.0/", "unspecified", "0.0.0.0"],
  ["http://0/", "unspecified", "0.0.0.0"],
  ["http://0.1.2.3/", "unspecified", "0.1.2.3"],
  ["http://[::]/", "unspecified", "::"],
  ["http://224.0.0.1/", "multicast", "224.0.0.1"],
  ["http://[ff02::1]/", "multicast", "ff02::1"],
  ["http://255.255.255.255/", "broadcast", "255.255.255.255"],
  ["http://4294967295/", "broadcast", "255.255.255.255"],
  ["http://240.0.0.1/", "reserved", "240.0.0.1"],
  ["http://192.0.2.1/", "reserved", "192.0.2.1"],
  ["http://198.18.0.1/", "reserved", "198.18.0.1"],
  ["http://[2001:db8::1]/", "reserved", "2001:db8::1"],
  ["http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "reserved", "2001:0:4136"],
];

const ALLOWED = [
  "https://api.openai.com/v1",
  "https://gitea.example.org/",
  "http://scripted.test/v1",
  "https://8.8.8.8/",
  "http://134744072/", // 8.8.8.8
  "https://1.1.1.1:8443/x",
  "http://172.32.0.1/", // just outside 172.16/12
  "http://100.128.0.1/", // just outside 100.64/10
  "http://11.0.0.1/",
  "https://[2606:4700:4700::1111]/",
  "http://[::ffff:8.8.8.8]/",
  "https://localhost.example.com/", // a name under a public domain
  "https://internal.example.com/",
];

describe("checkEgress: every spelling of a refused address (README: Egress policy)", () => {
  it.each(REFUSED)("refuses %s as %s", (url, category, shown) => {
    const verdict = checkEgress(url, strict);
    expect(verdict.allowed).toBe(false);
    if (verdict.allowed) return;
    expect(verdict.category).toBe(category);
    expect(verdict.reason).toContain(shown);
  });

  it.each(ALLOWED)("allows %s", (url) => {
    expect(checkEgress(url, strict)).toMatchObject({ allowed: true });
  });

  it("names the address in the reason, as the config error shows it", () => {
    expect(checkEgress("http://0x7f000001:9999/v1", strict)).toEqual({
      allowed: false,
      category: "loopback",
      reason: "loopback address 127.0.0.1",
    });
  });

  it("refuses other schemes and unparseable URLs", () => {
    expect(checkEgress("ftp://gitea.example.org/", strict)).toMatchObject({ allowed: false, category: "scheme" });
    expect(checkEgress("file:///etc/passwd", strict)).toMatchObject({ allowed: false, category: "scheme" });
    expect(checkEgress("javascript:alert(1)", strict)).toMatchObject({ allowed: false, category: "scheme" });
    expect(checkEgress("not a url", strict)).toMatchObject({ allowed: false, category: "invalid" });
    expect(checkEgress("http://[::1/", strict)).toMatchObject({ allowed: false, category: "invalid" });
  });
});

describe("BEAVER_ALLOW_PRIVATE_EGRESS=true", () => {
  it("allows loopback, private and CGNAT addresses and local names in any spelling", () => {
    for (const url of [
      "http://127.0.0.1:11434/v1",
      "http://2130706433/",
      "http://[::1]:8080/",
      "http://[::ffff:7f00:1]/",
      "http://localhost:1234/v1",
      "http://10.1/",
      "http://192.168.1.10/",
      "http://100.64.0.1/",
      "http://[fd12::1]/",
      "http://gitea:3000/",
      "http://ollama.local/",
    ]) {
      expect(checkEgress(url, open), url).toMatchObject({ allowed: true });
    }
  });

  it("still refuses metadata, link-local, unspecified, multicast and reserved addresses", () => {
    for (const url of [
      "http://169.254.169.254/",
      "http://[fd00:ec2::254]/",
      "http://metadata.google.internal/",
      "http://169.254.1.1/",
      "http://[fe80::1]/",
      "http://0.0.0.0/",
      "http://[::]/",
      "http://224.0.0.1/",
      "http://255.255.255.255/",
      "http://240.0.0.1/",
    ]) {
      expect(checkEgress(url, open), url).toMatchObject({ allowed: false });
    }
  });

  it("is off unless the var is exactly true", () => {
    for (const value of [undefined, "", "false", "1", "yes", "TRUE "]) {
      expect(egressPolicy({ BEAVER_ALLOW_PRIVATE_EGRESS: value }).allowPrivate, String(value)).toBe(false);
    }
    expect(egressPolicy({ BEAVER_ALLOW_PRIVATE_EGRESS: "true" }).allowPrivate).toBe(true);
  });
});

describe("Beaver's own host", () => {
  it("is refused on any port and scheme when it is a public name", () => {
    const policy = egressPolicy({}, "beaver.example.com");
    for (const url of ["https://beaver.example.com/api/ping", "http://beaver.example.com:8080/", "https://BEAVER.example.com./"]) {
      expect(checkEgress(url, policy), url).toMatchObject({ allowed: false, category: "self" });
    }
    expect(checkEgress("https://other.example.com/", policy)).toMatchObject({ allowed: true });
  });

  it("is told apart by port on a loopback address when private egress is allowed (local development)", () => {
    const policy = egressPolicy({ BEAVER_ALLOW_PRIVATE_EGRESS: "true" }, "127.0.0.1:8787");
    expect(checkEgress("http://127.0.0.1:8787/api/ping", policy)).toMatchObject({ allowed: false, category: "self" });
    expect(checkEgress("http://127.0.0.1:11434/v1", policy)).toMatchObject({ allowed: true });
    // Without the switch a loopback Beaver is refused for being loopback, the more telling reason.
    expect(checkEgress("http://127.0.0.1:8787/", egressPolicy({}, "127.0.0.1:8787"))).toMatchObject({ category: "loopback" });
  });
});

describe("the address readers", () => {
  it("reads IPv4 the way the WHATWG URL parser does", () => {
    expect(parseIPv4("127.0.0.1")).toBe(0x7f000001);
    expect(parseIPv4("127.1")).toBe(0x7f000001);
    expect(parseIPv4("0x7f.1")).toBe(0x7f000001);
    expect(parseIPv4("0177.0.0.01")).toBe(0x7f000001);
    expect(parseIPv4("2130706433")).toBe(0x7f000001);
    expect(parseIPv4("0x")).toBe(0);
    expect(parseIPv4("1.2.3.4.")).toBe(0x01020304);
    expect(parseIPv4("256.0.0.1")).toBeNull();
    expect(parseIPv4("1.2.3.4.5")).toBeNull();
    expect(parseIPv4("4294967296")).toBeNull();
    expect(parseIPv4("08.0.0.1")).toBeNull();
    expect(parseIPv4("example.com")).toBeNull();
  });

  it("agrees with new URL() on every refused spelling", () => {
    for (const [url, , shown] of REFUSED) {
      const host = new URL(url).hostname;
      if (/^\d+\.\d+\.\d+\.\d+$/.test(shown)) {
        const raw = url.slice("http://".length).split(/[/:]/)[0]!;
        if (!raw.startsWith("[") && /^[0-9a-fx.]+$/i.test(raw)) expect(parseIPv4(raw), url).toBe(parseIPv4(host));
      }
    }
  });

  it("reads IPv6 with compression and a dotted tail", () => {
    expect(parseIPv6("::1")).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6("::ffff:127.0.0.1")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseIPv6("fe80::")).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIPv6("1::2::3")).toBeNull();
    expect(parseIPv6("1:2:3:4:5:6:7:8:9")).toBeNull();
    expect(parseIPv6("::ffff:127.1")).toBeNull();
    expect(parseIPv6("fe80::1%eth0")).toBeNull();
  });

  it("classifies raw spellings that never went through new URL()", () => {
    expect(classifyHost("0x7f.0.0.1")).toMatchObject({ category: "loopback" });
    expect(classifyHost("0177.0.0.1")).toMatchObject({ category: "loopback" });
    expect(classifyHost("::ffff:127.0.0.1")).toMatchObject({ category: "loopback" });
    expect(classifyHost("[::ffff:7f00:1]")).toMatchObject({ category: "loopback" });
    expect(classifyHost("example.com")).toBeNull();
  });
});

describe("refusedUrlFields and assertEgress", () => {
  it("walks a configuration and names every refused URL field by its dotted path", () => {
    const config = {
      model: { provider: "openai-compatible", id: "m", base_url: "http://127.1/v1" },
      fallback_model: { provider: "openai-compatible", id: "m", base_url: "https://api.example.com/v1" },
      auxiliary_model: { provider: "openai-compatible", id: "m", base_url: "http://[::1]/v1" },
      toolchain: { gitea_base_url: "http://169.254.169.254/" },
      runtime: { system_prompt: "http://127.0.0.1/ is just text here" },
    };
    expect(refusedUrlFields(config, strict)).toEqual([
      { path: "model.base_url", message: "refused: loopback address 127.0.0.1" },
      { path: "auxiliary_model.base_url", message: "refused: loopback address ::1" },
      { path: "toolchain.gitea_base_url", message: "refused: cloud metadata address 169.254.169.254" },
    ]);
    expect(refusedUrlFields(config, open).map((f) => f.path)).toEqual(["toolchain.gitea_base_url"]);
  });

  it("throws egress_refused with the field path in the message", () => {
    let caught: unknown;
    try {
      assertEgress("http://10.0.0.5/", strict, "redirect 1");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe("egress_refused");
    expect((caught as AppError).message).toBe("redirect 1: refused: private address 10.0.0.5");
  });
});
