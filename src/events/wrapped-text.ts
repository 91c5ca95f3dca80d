/**
 * A text with its line wraps taken out, and the way back from a position in it to the position in the
 * text as written. An encoded secret wrapped at 76 columns (MIME, `base64 -w`), at 64 (PEM), at any
 * width an attacker picks, with `\n` or `\r\n`, indented, or inside a JSON string where the break is
 * the two characters `\n`, reads as one run once the wraps are out.
 */

/**
 * A line break, real (`\n`, `\r\n`, a lone `\r`) or JSON-escaped (`\n`, `\r\n`, `\r` as two-character
 * escapes), with the spaces and tabs around it: one wrap. Several in a row are one wrap too.
 */
const WRAP = /(?:[ \t]*(?:\r\n|\r|\n|\\r\\n|\\r|\\n)[ \t]*)+/g;
const HAS_WRAP = /[\r\n]|\\[rn]/;

export interface Unwrapped {
  /** The text without its wraps. */
  text: string;
  /** Where, in the text as written, a range [start, end) of `text` lies (wraps inside it included). */
  original(start: number, end: number): [number, number];
}

/** `text` with its wraps taken out, or null when it has none. */
export function unwrap(text: string): Unwrapped | null {
  if (!HAS_WRAP.test(text)) return null;
  // kept[i] = [start in the original, start in the unwrapped text] of the i-th piece kept
  const origStarts: number[] = [];
  const joinStarts: number[] = [];
  const pieces: string[] = [];
  let from = 0;
  let joined = 0;
  WRAP.lastIndex = 0;
  for (let m = WRAP.exec(text); m !== null; m = WRAP.exec(text)) {
    if (m.index > from) {
      origStarts.push(from);
      joinStarts.push(joined);
      pieces.push(text.slice(from, m.index));
      joined += m.index - from;
    }
    from = m.index + m[0].length;
  }
  if (from < text.length) {
    origStarts.push(from);
    joinStarts.push(joined);
    pieces.push(text.slice(from));
  }
  const at = (j: number): number => {
    // the last piece that starts at or before j
    let lo = 0;
    let hi = joinStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (joinStarts[mid] <= j) lo = mid;
      else hi = mid - 1;
    }
    return origStarts[lo] + (j - joinStarts[lo]);
  };
  return {
    text: pieces.join(''),
    original: (start, end) => [at(start), at(end - 1) + 1],
  };
}
