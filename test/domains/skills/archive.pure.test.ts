/** Archive checks: every attack is rejected before anything is stored, with the entry named. */
import { describe, expect, it } from "vitest";
import { readArchive, detectFormat } from "../../../src/storage/archive/index.ts";
import { AppError } from "../../../src/kernel/errors.ts";
import { gzip, tar, tarGz, zip } from "../../fixtures/skills/archives.ts";
import { statusOf } from "../../../src/edge/http/errors.ts";

async function rejection(bytes: Uint8Array, limits?: Parameters<typeof readArchive>[1]): Promise<AppError> {
  try {
    await readArchive(bytes, limits);
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("archive was accepted");
}

const problemsOf = (e: AppError) => (e.details as { problems: { path: string; message: string }[] }).problems;
const ok = { name: "skill/SKILL.md", data: "---\nname: skill\ndescription: x\n---\n" };

describe("archive reading", () => {
  it("reads tar.gz, tar and zip with paths, bytes and executable bits", async () => {
    const entries = [
      ok,
      { name: "skill/run.sh", data: "#!/bin/sh\n", mode: 0o755 },
      { name: "skill/assets/", type: "directory" as const },
      { name: "skill/assets/a.bin", data: new Uint8Array([0, 255]) },
    ];
    for (const bytes of [await tarGz(entries), await tar(entries)]) {
      const res = await readArchive(bytes);
      expect(res.files.map((f) => [f.path, f.executable, f.bytes.byteLength])).toEqual([
        ["skill/SKILL.md", false, 35],
        ["skill/run.sh", true, 10],
        ["skill/assets/a.bin", false, 2],
      ]);
    }
    const z = await zip([ok, { name: "skill/run.sh", data: "#!/bin/sh\n", executable: true }, { name: "skill/assets/", directory: true }]);
    const res = await readArchive(z);
    expect(res.format).toBe("zip");
    expect(res.files.map((f) => [f.path, f.executable])).toEqual([
      ["skill/SKILL.md", false],
      ["skill/run.sh", true],
    ]);
  });

  it("drops OS litter and reports it", async () => {
    const res = await readArchive(
      await zip([ok, { name: "__MACOSX/skill/._SKILL.md", data: "x" }, { name: "skill/.DS_Store", data: "x" }]),
    );
    expect(res.files.map((f) => f.path)).toEqual(["skill/SKILL.md"]);
    expect(res.ignored).toEqual(["__MACOSX/skill/._SKILL.md", "skill/.DS_Store"]);
  });

  const attacks: [string, () => Promise<Uint8Array>, string, RegExp][] = [
    [
      "tar symlink",
      () => tarGz([ok, { name: "skill/link", type: "symlink", linkname: "/etc/passwd" }]),
      "skill/link",
      /symbolic link to '\/etc\/passwd'/,
    ],
    ["zip symlink", () => zip([ok, { name: "skill/link", data: "/etc/passwd", unixMode: 0o120777 }]), "skill/link", /symbolic link/],
    ["hard link", () => tarGz([ok, { name: "skill/hard", type: "link", linkname: "skill/SKILL.md" }]), "skill/hard", /hard link/],
    ["character device", () => tarGz([ok, { name: "skill/tty", type: "character-device" }]), "skill/tty", /character-device/],
    ["block device", () => tarGz([ok, { name: "skill/sda", type: "block-device" }]), "skill/sda", /block-device/],
    ["fifo", () => tarGz([ok, { name: "skill/pipe", type: "fifo" }]), "skill/pipe", /fifo/],
    ["zip device", () => zip([ok, { name: "skill/dev", data: "", unixMode: 0o020644 }]), "skill/dev", /character-device/],
    ["absolute path", () => tarGz([ok, { name: "/etc/cron.d/x", data: "x" }]), "/etc/cron.d/x", /absolute path/],
    ["parent escape", () => tarGz([ok, { name: "skill/../../escape.sh", data: "x" }]), "skill/../../escape.sh", /'\.\.' segment/],
    ["zip parent escape", () => zip([ok, { name: "../evil.txt", data: "x" }]), "../evil.txt", /'\.\.' segment/],
    ["windows drive path", () => zip([ok, { name: "C:/evil.txt", data: "x" }]), "C:/evil.txt", /absolute path/],
    ["backslash path", () => zip([ok, { name: "skill\\..\\evil.txt", data: "x" }]), "skill\\..\\evil.txt", /backslash/],
    [
      "duplicate path",
      () => tarGz([ok, { name: "skill/a.md", data: "1" }, { name: "./skill/a.md", data: "2" }]),
      "skill/a.md",
      /duplicate path/,
    ],
    [
      "file and directory",
      () => tarGz([ok, { name: "skill/x", data: "1" }, { name: "skill/x/y", data: "2" }]),
      "skill/x",
      /both a file and a directory/,
    ],
  ];
  for (const [label, build, path, message] of attacks) {
    it(`rejects a ${label}`, async () => {
      const err = await rejection(await build());
      expect(err.code).toBe("unprocessable");
      expect(statusOf(err.code)).toBe(422);
      const p = problemsOf(err).find((x) => x.path === path);
      expect(p, JSON.stringify(problemsOf(err))).toBeDefined();
      expect(p!.message).toMatch(message);
      expect(err.message).toContain(path);
    });
  }

  // Issue 25 item 3: names no skill or plugin file may have are a bad request (400), as in a JSON upload.
  const badNames: [string, () => Promise<Uint8Array>, string, RegExp][] = [
    ["percent-encoded segment", () => tarGz([ok, { name: "skill/%2e%2e/x", data: "x" }]), "skill/%2e%2e/x", /percent-encoded segment/],
    ["zip percent-encoded segment", () => zip([ok, { name: "%2e%2e/x", data: "x" }]), "%2e%2e/x", /percent-encoded segment/],
    [".git/config", () => tarGz([ok, { name: "skill/.git/config", data: "[core]" }]), "skill/.git/config", /'\.git' segment/],
    [
      ".GIT in any case",
      () => zip([ok, { name: "skill/.Git/hooks/post-checkout", data: "x" }]),
      "skill/.Git/hooks/post-checkout",
      /'\.git' segment/,
    ],
    [
      "case-only duplicate",
      () => tarGz([ok, { name: "skill/Notes.md", data: "1" }, { name: "skill/notes.md", data: "2" }]),
      "skill/notes.md",
      /differs only by case or Unicode normalisation from 'skill\/Notes\.md'/,
    ],
    [
      "Unicode-normalisation duplicate",
      () => zip([ok, { name: "skill/ﬁle.md", data: "1" }, { name: "skill/file.md", data: "2" }]),
      "skill/file.md",
      /differs only by case or Unicode normalisation/,
    ],
  ];
  for (const [label, build, path, message] of badNames) {
    it(`answers a ${label} with 400`, async () => {
      const err = await rejection(await build());
      expect(err.code).toBe("bad_request");
      expect(statusOf(err.code)).toBe(400);
      const p = problemsOf(err).find((x) => x.path === path);
      expect(p, JSON.stringify(problemsOf(err))).toBeDefined();
      expect(p!.message).toMatch(message);
    });
  }

  it("rejects too many files", async () => {
    const entries = Array.from({ length: 11 }, (_, i) => ({ name: `skill/f${i}.md`, data: "x" }));
    const err = await rejection(await tarGz(entries), { maxArchiveBytes: 1 << 20, maxFiles: 10, maxUnpackedBytes: 1 << 20 });
    expect(problemsOf(err)[0]!.message).toMatch(/too many files: 11 \(limit 10\)/);
  });

  it("stops a gzip bomb while inflating", async () => {
    const bomb = await tarGz([ok, { name: "skill/zeros.bin", data: new Uint8Array(8 * 1024 * 1024) }]);
    expect(bomb.byteLength).toBeLessThan(64 * 1024);
    const err = await rejection(bomb, { maxArchiveBytes: 1 << 20, maxFiles: 10, maxUnpackedBytes: 1 << 20 });
    expect(statusOf(err.code)).toBe(422);
    expect(problemsOf(err)[0]!.message).toMatch(/too many bytes once unpacked/);
  });

  it("stops a zip whose entries inflate past the limit", async () => {
    const err = await rejection(await zip([ok, { name: "skill/zeros.bin", data: new Uint8Array(4 * 1024 * 1024) }]), {
      maxArchiveBytes: 1 << 20,
      maxFiles: 10,
      maxUnpackedBytes: 1 << 20,
    });
    expect(problemsOf(err)[0]!.message).toMatch(/too many bytes once unpacked/);
  });

  it("rejects an oversized archive before reading it", async () => {
    const err = await rejection(await tarGz([ok]), { maxArchiveBytes: 10, maxFiles: 10, maxUnpackedBytes: 1 << 20 });
    expect(problemsOf(err)[0]!.message).toMatch(/archive is \d+ bytes \(limit 10\)/);
  });

  it("answers 400 for bytes that are not an archive, or a corrupt one", async () => {
    const notArchive = await rejection(new TextEncoder().encode("hello, definitely not an archive"));
    expect(statusOf(notArchive.code)).toBe(400);
    expect(notArchive.message).toMatch(/unrecognised magic bytes/);
    const good = await tarGz([ok]);
    const corrupt = good.slice(0, 20);
    expect(statusOf((await rejection(corrupt)).code)).toBe(400);
    const badTar = await tar([ok]);
    badTar[150] = badTar[150]! ^ 0xff; // break the header checksum
    expect(statusOf((await rejection(await gzip(badTar))).code)).toBe(400);
    expect(detectFormat(new Uint8Array([0x50, 0x4b, 0x03, 0x04]))).toBe("zip");
  });
});
