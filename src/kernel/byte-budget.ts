/**
 * The byte budget of a list response (docs/limits.md): a page takes items, in order, while their
 * serialised size stays within the budget, then stops and the list hands back its cursor. One item is
 * always taken, so a page over budget by its first item still moves the cursor forward.
 */

const encoder = new TextEncoder();

export interface BudgetedPage<T> {
  items: T[];
  /** True when items were left out for the budget (the next page starts after the last one taken). */
  truncated: boolean;
}

/**
 * The longest prefix of `items` whose JSON (items and separating commas) fits in `budgetBytes`;
 * `wire` picks what of an item is sent (an item may carry its row for the cursor).
 */
export function takeWithinBudget<T>(
  items: readonly T[],
  budgetBytes: number,
  wire: (item: T) => unknown = (item) => item,
): BudgetedPage<T> {
  let used = 2; // the array's brackets
  const out: T[] = [];
  for (const item of items) {
    const size = encoder.encode(JSON.stringify(wire(item)) ?? "null").byteLength + (out.length > 0 ? 1 : 0);
    if (out.length > 0 && used + size > budgetBytes) return { items: out, truncated: true };
    used += size;
    out.push(item);
  }
  return { items: out, truncated: false };
}
