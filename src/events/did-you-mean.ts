/**
 * "did you mean …?" for a name that is not known (a plugin, tool, skill, MCP server, command or
 * flag): the known name closest by edit distance, when it is close enough to be a slip of the
 * keyboard rather than a different word.
 */

/** Levenshtein distance (insert, delete, substitute; an adjacent swap counts as one). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push(new Array<number>(b.length + 1).fill(0));
    rows[i][0] = i;
  }
  for (let j = 0; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
      rows[i][j] = d;
    }
  }
  return rows[a.length][b.length];
}

/** The known name `name` most likely meant, or null. Case and `-`/`_` differences count as nothing. */
export function closestName(name: string, known: Iterable<string>): string | null {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  const n = norm(name);
  if (!n) return null;
  // a third of the name's length, at least 1 and at most 3 edits: "feedbacklense" → feedbacklens, not "chat" → "cat…"
  const limit = Math.max(1, Math.min(3, Math.floor(n.length / 3)));
  let best: string | null = null;
  let bestD = Infinity;
  for (const k of known) {
    if (k === name) return null;
    const d = editDistance(n, norm(k));
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best !== null && bestD <= limit ? best : null;
}

/** ` (did you mean X?)`, or '' when nothing is close. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const c = closestName(name, known);
  return c === null ? '' : ` (did you mean ${c}?)`;
}
