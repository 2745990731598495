/**
 * Applies a git delta to its base (docs/workspace.md, "Git", its memory paragraph; git's gitformat-pack,
 * "Deltified representation"): two sizes, then copy-from-base and insert-literal instructions. A few
 * dozen lines of a fixed format; isomorphic-git has the same routine but does not export it. Every
 * instruction is bounds-checked, so a hostile delta is an error, never a read outside the base.
 */
import { ObjectTooLargeError, PackFormatError } from "./pack-reader.ts";

export function applyDelta(delta: Uint8Array, base: Uint8Array, maxBytes: number): Uint8Array {
  let i = 0;
  const next = () => {
    if (i >= delta.byteLength) throw new PackFormatError("a delta ends early");
    return delta[i++]!;
  };
  const varint = () => {
    let n = 0;
    let scale = 1;
    let c: number;
    do {
      c = next();
      n += (c & 0x7f) * scale;
      scale *= 128;
    } while (c & 0x80 && scale <= 2 ** 53);
    return n;
  };
  const baseSize = varint();
  if (baseSize !== base.byteLength) throw new PackFormatError(`a delta expects a base of ${baseSize} bytes, not ${base.byteLength}`);
  const size = varint();
  if (size > maxBytes) throw new ObjectTooLargeError(size, maxBytes);
  const out = new Uint8Array(size);
  let at = 0;
  while (i < delta.byteLength) {
    const op = next();
    if (op & 0x80) {
      // Copy: up to four offset bytes and three length bytes, each present when its bit is set.
      let from = 0;
      let len = 0;
      for (let b = 0; b < 4; b++) if (op & (1 << b)) from += next() * 2 ** (8 * b);
      for (let b = 0; b < 3; b++) if (op & (0x10 << b)) len += next() * 2 ** (8 * b);
      if (len === 0) len = 0x10000;
      if (from + len > base.byteLength || at + len > size) throw new PackFormatError("a delta copies outside its base or result");
      out.set(base.subarray(from, from + len), at);
      at += len;
    } else if (op > 0) {
      if (i + op > delta.byteLength || at + op > size) throw new PackFormatError("a delta inserts past its end");
      out.set(delta.subarray(i, i + op), at);
      i += op;
      at += op;
    } else throw new PackFormatError("a delta holds the reserved instruction 0");
  }
  if (at !== size) throw new PackFormatError(`a delta makes ${at} bytes, not its declared ${size}`);
  return out;
}
