/**
 * The per-session `seq` counter shared by persistent and transient events. Transient seqs are never
 * stored, so the counter reserves blocks ahead and persists the block's end (the high-water mark)
 * before handing out any seq in it: after a restart counting resumes past everything ever sent.
 */

/** Seqs reserved per storage write; transient-heavy steps cost one write per block. */
export const SEQ_BLOCK = 256;

export class SeqCounter {
  #next: number;
  #reserved: number;
  readonly #persistReserved: (reserved: number) => void;

  /**
   * @param lastUsed highest seq known to be used (max stored event seq)
   * @param reserved high-water mark persisted by an earlier activation (0 if none)
   */
  constructor(lastUsed: number, reserved: number, persistReserved: (reserved: number) => void) {
    this.#next = Math.max(lastUsed, reserved) + 1;
    this.#reserved = this.#next - 1;
    this.#persistReserved = persistReserved;
  }

  take(): number {
    if (this.#next > this.#reserved) {
      this.#reserved = this.#next + SEQ_BLOCK - 1;
      this.#persistReserved(this.#reserved);
    }
    return this.#next++;
  }
}
