/**
 * Text made safe to print on a terminal: every control sequence and control character is taken out
 * except colour and text style (SGR, `ESC [ … m`), line feeds and tabs. Gone are OSC (clipboard
 * writes with 52, the window title with 0/2, hyperlinks with 8), DCS, APC, PM and SOS strings, every
 * other CSI (cursor movement, erasing, scrolling regions, device reports and modes), two-character
 * escapes (cursor save/restore, reset, charset and line-size selection), the 8-bit C1 forms of all of
 * these, a bare ESC, and the other C0 controls (bell, backspace, …). A carriage return not followed
 * by a line feed becomes a line feed: it would let later text overwrite earlier text on the line.
 * SGR's "conceal" (8) is dropped, so text cannot be printed invisible by a style.
 *
 * Why not a library: the well-kept ones (ansi-regex and strip-ansi, which uses it) find sequences to
 * remove all of them, colour included; what must stay here is the opposite, an allow-list where only
 * a complete, well-formed SGR survives and everything else that is not plain text goes. The scan
 * below follows ECMA-48's sequence shapes (the states of the DEC/VT500 parser), and its safety does
 * not depend on parsing like the terminal does: the output holds no ESC but at the start of an SGR it
 * wrote itself, and no C1 or other C0 character at all, so the terminal never leaves its ground state.
 * A sequence cut across two writes loses its introducer and prints the rest as plain characters.
 */

const ESC = 0x1b;
const BEL = 0x07;
/** Anything that needs the careful path: C0 but tab and line feed, DEL and C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this regex's job
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
/** The longest SGR kept (longer is not a style anyone writes). */
const MAX_SGR = 64;

/** `text` with every control sequence but colour taken out (see the file's comment). */
export function terminalSafe(text: string): string {
  if (!CONTROL.test(text)) return text;
  let out = '';
  let i = 0;
  const n = text.length;
  // from here on no control string ends: a later one needs no scan (else many unended OSCs are quadratic)
  const unended = { from: Number.POSITIVE_INFINITY };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c !== 0x7f && (c < 0x80 || c > 0x9f)) {
      // a run of plain characters
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d < 0x20 || d === 0x7f || (d >= 0x80 && d <= 0x9f)) break;
        j++;
      }
      out += text.slice(i, j);
      i = j;
      continue;
    }
    if (c === 0x0a || c === 0x09) {
      out += text[i];
      i++;
      continue;
    }
    if (c === 0x0d) {
      // \r\n is a line end; a lone \r would return over the line
      out += '\n';
      i += text.charCodeAt(i + 1) === 0x0a ? 2 : 1;
      continue;
    }
    if (c === ESC || (c >= 0x80 && c <= 0x9f)) {
      const seq = sequenceAt(text, i, unended);
      if (seq.sgr !== null) out += seq.sgr;
      i = seq.end;
      continue;
    }
    // any other C0 control, DEL: dropped
    i++;
  }
  return out;
}

interface Sequence {
  /** Where the text after the sequence starts. */
  end: number;
  /** The SGR to print in its place, or null for nothing. */
  sgr: string | null;
}

/**
 * The sequence that starts at `i` (an ESC or a C1 character). A sequence that is not complete —
 * cut by the end of the text, broken by a character it cannot hold — gives up only its introducer:
 * what follows is scanned again as text, so nothing is hidden by an unfinished escape.
 */
function sequenceAt(text: string, i: number, unended: { from: number }): Sequence {
  const c = text.charCodeAt(i);
  let kind: number;
  let body: number;
  if (c === ESC) {
    if (i + 1 >= text.length) return { end: i + 1, sgr: null };
    const next = text.charCodeAt(i + 1);
    // ESC [ → CSI, ESC ] → OSC, ESC P → DCS, ESC X → SOS, ESC ^ → PM, ESC _ → APC: the C1 they stand for
    if (next >= 0x40 && next <= 0x5f) {
      kind = next + 0x40;
      body = i + 2;
    } else return escapeAt(text, i);
  } else {
    kind = c;
    body = i + 1;
  }
  switch (kind) {
    case 0x9b:
      return csiAt(text, body);
    case 0x9d:
    case 0x90:
    case 0x98:
    case 0x9e:
    case 0x9f:
      return controlStringAt(text, body, unended);
    default:
      // another C1 (NEL, IND, RI, HTS, SS2/SS3, ST, …): dropped alone
      return { end: body, sgr: null };
  }
}

/** ESC, intermediates (0x20–0x2F), a final (0x30–0x7E): charset selection, DECSC/DECRC, RIS, DECALN… */
function escapeAt(text: string, i: number): Sequence {
  let j = i + 1;
  while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
  const f = j < text.length ? text.charCodeAt(j) : -1;
  if (f >= 0x30 && f <= 0x7e) return { end: j + 1, sgr: null };
  // a bare ESC (before a control, a non-ASCII character, the end): dropped alone
  return { end: i + 1, sgr: null };
}

/** CSI: parameters (0x30–0x3F), intermediates (0x20–0x2F), a final (0x40–0x7E); only SGR is kept. */
function csiAt(text: string, body: number): Sequence {
  let j = body;
  while (j < text.length && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x3f) j++;
  const paramsEnd = j;
  while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
  const f = j < text.length ? text.charCodeAt(j) : -1;
  if (f < 0x40 || f > 0x7e) return { end: body, sgr: null };
  const params = text.slice(body, paramsEnd);
  if (f === 0x6d && paramsEnd === j && params.length <= MAX_SGR && /^[0-9;:]*$/.test(params)) {
    return { end: j + 1, sgr: sgrWithoutConceal(params) };
  }
  return { end: j + 1, sgr: null };
}

/** OSC, DCS, SOS, PM, APC: everything up to ST (ESC \ or 0x9C) or BEL is dropped. */
function controlStringAt(text: string, body: number, unended: { from: number }): Sequence {
  if (body >= unended.from) return { end: body, sgr: null };
  for (let j = body; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === BEL || d === 0x9c) return { end: j + 1, sgr: null };
    if (d === ESC) return text.charCodeAt(j + 1) === 0x5c ? { end: j + 2, sgr: null } : { end: j, sgr: null };
  }
  unended.from = body;
  return { end: body, sgr: null };
}

/** The SGR with its "conceal" parameter (8) taken out; colour arguments (38;5;8) are left alone. */
function sgrWithoutConceal(params: string): string {
  if (!params.includes('8')) return `\x1b[${params}m`;
  const parts = params.split(';');
  const kept: string[] = [];
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    if ((p === '38' || p === '48' || p === '58') && (parts[k + 1] === '5' || parts[k + 1] === '2')) {
      const take = parts[k + 1] === '5' ? 3 : 5;
      kept.push(...parts.slice(k, k + take));
      k += take - 1;
      continue;
    }
    if (p === '8' || p === '08') continue;
    kept.push(p);
  }
  // a style that held only "conceal" becomes no style at all
  return kept.length ? `\x1b[${kept.join(';')}m` : '';
}
