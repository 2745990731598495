/**
 * Buffered reads over a stream of byte chunks (docs/workspace.md, "Git", its memory paragraph): the
 * upload-pack answer and the packfile inside it are parsed as they arrive, so a clone holds the chunk
 * at hand and the object being inflated, never the whole download. `offset` counts the bytes consumed,
 * which is how a pack names a delta's base (its offset in the pack).
 */
export class TruncatedError extends Error {
  constructor(what: string) {
    super(`the remote's answer ended in the middle of ${what}`);
    this.name = "TruncatedError";
  }
}

export class ByteReader {
  readonly #source: AsyncIterator<Uint8Array>;
  #buf: Uint8Array = new Uint8Array(0);
  #pos = 0;
  #ended = false;
  /** Bytes consumed so far. */
  offset = 0;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  get #available(): number {
    return this.#buf.byteLength - this.#pos;
  }

  /** Appends the next chunk of the source to what is unread; false at its end. */
  async #fill(): Promise<boolean> {
    if (this.#ended) return false;
    const next = await this.#source.next();
    if (next.done) {
      this.#ended = true;
      return false;
    }
    const rest = this.#buf.subarray(this.#pos);
    if (rest.byteLength === 0) this.#buf = next.value;
    else {
      const joined = new Uint8Array(rest.byteLength + next.value.byteLength);
      joined.set(rest);
      joined.set(next.value, rest.byteLength);
      this.#buf = joined;
    }
    this.#pos = 0;
    return true;
  }

  /** Exactly `n` bytes (a view: copy it to keep it past the next read). */
  async read(n: number, what: string): Promise<Uint8Array> {
    while (this.#available < n) if (!(await this.#fill())) throw new TruncatedError(what);
    const out = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    this.offset += n;
    return out;
  }

  async byte(what: string): Promise<number> {
    return (await this.read(1, what))[0]!;
  }

  /** Everything unread now (pulling one chunk when nothing is), or null at the end of the source. */
  async chunk(): Promise<Uint8Array | null> {
    if (this.#available === 0 && !(await this.#fill())) return null;
    const out = this.#buf.subarray(this.#pos);
    this.#pos = this.#buf.byteLength;
    this.offset += out.byteLength;
    return out;
  }

  /** Takes back the last `n` bytes `chunk()` gave (a zlib stream ended before them). */
  unread(n: number): void {
    this.#pos -= n;
    this.offset -= n;
  }

  async atEnd(): Promise<boolean> {
    return this.#available === 0 && !(await this.#fill());
  }
}
