/** A plain object whose values are all primitives (most tool arguments): a spread copies it whole. */
export function isFlatRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== null && typeof x === 'object') return false;
  }
  return true;
}
