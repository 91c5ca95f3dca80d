/**
 * A uniform random sample of exactly `size` of `n` rows, the same every time for the same seed
 * (Knuth's selection sampling, Algorithm S: one pass, no row list). A sample drawn at random,
 * not every k-th row, cannot line up with a period in the export's order.
 */

/** mulberry32: a small seeded generator, enough for sampling. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 1 at the sampled rows' indices. */
export function sampleRows(n: number, size: number, seed: number): Uint8Array {
  const mask = new Uint8Array(n);
  if (size >= n) return mask.fill(1);
  const r = prng(seed);
  let chosen = 0;
  for (let i = 0; i < n && chosen < size; i++) {
    if ((n - i) * r() < size - chosen) {
      mask[i] = 1;
      chosen++;
    }
  }
  return mask;
}
