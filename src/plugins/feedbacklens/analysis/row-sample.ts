/**
 * A uniform random sample of exactly `size` of `n` rows, the same every time for the same seed
 * (Knuth's selection sampling, Algorithm S: one pass, no row list). A sample drawn at random,
 * not every k-th row, cannot line up with a period in the export's order.
 */
import { seededRandom } from '../../shared/seeded-random.js';

/** 1 at the sampled rows' indices. */
export function sampleRows(n: number, size: number, seed: number): Uint8Array {
  const mask = new Uint8Array(n);
  if (size >= n) return mask.fill(1);
  const r = seededRandom(seed);
  let chosen = 0;
  for (let i = 0; i < n && chosen < size; i++) {
    if ((n - i) * r() < size - chosen) {
      mask[i] = 1;
      chosen++;
    }
  }
  return mask;
}
