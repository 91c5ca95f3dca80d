/**
 * Turn a file's bytes into text without trusting the encoding: BOMs first, then strict UTF-8,
 * then Windows-1252 (what spreadsheet exports on Windows usually are).
 */
export type DetectedEncoding = 'utf-8' | 'utf-8-bom' | 'utf-16le' | 'utf-16be' | 'windows-1252';

export function decodeText(bytes: Uint8Array): { text: string; encoding: DetectedEncoding } {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return { text: new TextDecoder('utf-8').decode(bytes.subarray(3)), encoding: 'utf-8-bom' };
  }
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) {
    return { text: new TextDecoder('utf-16le').decode(bytes.subarray(2)), encoding: 'utf-16le' };
  }
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    return { text: new TextDecoder('utf-16be').decode(bytes.subarray(2)), encoding: 'utf-16be' };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    return { text: decodeWindows1252(bytes), encoding: 'windows-1252' };
  }
}

// Node's TextDecoder('windows-1252') decodes 0x80–0x9F as ISO-8859-1 control codes, so map them here.
const CP1252_HIGH = [
  0x20ac, 0xfffd, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0xfffd, 0x017d, 0xfffd, 0xfffd, 0x2018, 0x2019,
  0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0xfffd, 0x017e, 0x0178,
];

export function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    const chunk = bytes.subarray(i, i + 8192);
    const codes = Array.from(chunk, (b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] : b));
    out += String.fromCharCode(...codes);
  }
  return out;
}

/** Thrown by a strict UTF-8 chunk decoder at the first byte that is not UTF-8. */
export class NotUtf8Error extends Error {
  constructor() {
    super('not UTF-8');
  }
}

export interface ChunkDecoder {
  readonly encoding: DetectedEncoding;
  /** bytes of the file's start to skip (the BOM) */
  readonly skip: number;
  decode(chunk: Uint8Array): string;
  /** what is left at the end (an incomplete sequence throws for strict UTF-8) */
  end(): string;
}

/**
 * `decodeText` for a file read in chunks: the same encodings from the same first bytes. Without a
 * BOM it decodes strict UTF-8 and throws NotUtf8Error at the first bad byte; the reader then starts
 * over with `{ fallback: true }` (Windows-1252), as `decodeText` would have decided for the file.
 */
export function chunkDecoder(head: Uint8Array, opts: { fallback?: boolean } = {}): ChunkDecoder {
  const make = (encoding: DetectedEncoding, skip: number, label: string, fatal: boolean): ChunkDecoder => {
    const d = new TextDecoder(label, { fatal });
    const wrap = <T>(f: () => T): T => {
      try {
        return f();
      } catch (e) {
        if (fatal && e instanceof TypeError) throw new NotUtf8Error();
        throw e;
      }
    };
    return { encoding, skip, decode: (c) => wrap(() => d.decode(c, { stream: true })), end: () => wrap(() => d.decode()) };
  };
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return make('utf-8-bom', 3, 'utf-8', false);
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return make('utf-16le', 2, 'utf-16le', false);
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return make('utf-16be', 2, 'utf-16be', false);
  if (!opts.fallback) return make('utf-8', 0, 'utf-8', true);
  return { encoding: 'windows-1252', skip: 0, decode: decodeWindows1252, end: () => '' };
}
