/**
 * Before a run starts: is this input file text at all? Its first 64 KiB are decoded the way the
 * readers decode text (BOM, strict UTF-8, else Windows-1252); a NUL, a byte no encoding defines
 * or a run of control codes means a binary file (an image, a workbook, an archive) was given where
 * text is expected. The answer names what the file looks like, never its bytes.
 */
import { open } from 'node:fs/promises';

const HEAD_BYTES = 64 * 1024;

/** Well-known binary formats by their first bytes, in the user's words. */
const SIGNATURES: Array<{ bytes: number[]; what: string }> = [
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'a PNG image' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image' },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: 'a GIF image' },
  { bytes: [0x25, 0x50, 0x44, 0x46], what: 'a PDF document' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: 'a ZIP archive (an Excel .xlsx workbook is one)' },
  { bytes: [0xd0, 0xcf, 0x11, 0xe0], what: 'an Office document (an old Excel .xls workbook?)' },
  { bytes: [0x1f, 0x8b], what: 'a gzip archive' },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], what: 'a program (ELF executable)' },
];

/** Bytes Windows-1252 leaves undefined: a file with them is in no encoding the readers accept. */
const CP1252_UNDEFINED = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

/** Control codes text never holds (tab, line feed, form feed, carriage return, escape are fine). */
function isStrayControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0b && code !== 0x0c && code !== 0x0d && code !== 0x1b) || code === 0x7f;
}

function decodes(label: string, bytes: Uint8Array): string | null {
  try {
    // stream: a character cut at the end of the 64 KiB is not an error
    return new TextDecoder(label, { fatal: true }).decode(bytes, { stream: true });
  } catch {
    return null;
  }
}

/** Where text stops being text, or null: decoded as the readers would decode it. */
function firstNonText(head: Uint8Array): { offset: number; why: string } | null {
  let text: string | null = null;
  if (head[0] === 0xff && head[1] === 0xfe) text = decodes('utf-16le', head.subarray(2));
  else if (head[0] === 0xfe && head[1] === 0xff) text = decodes('utf-16be', head.subarray(2));
  else if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) text = decodes('utf-8', head.subarray(3));
  else text = decodes('utf-8', head);
  if (text === null && !(head[0] === 0xff && head[1] === 0xfe) && !(head[0] === 0xfe && head[1] === 0xff)) {
    // the readers fall back to Windows-1252: every byte but five is a character there
    const bad = head.findIndex((b) => CP1252_UNDEFINED.has(b) || b === 0);
    if (bad >= 0) return { offset: bad, why: head[bad] === 0 ? 'a NUL byte' : 'a byte that is not a character in UTF-8 or Windows-1252' };
    text = '';
    for (const b of head) text += String.fromCharCode(b);
  }
  if (text === null) return { offset: 0, why: 'bytes that are not UTF-16 text' };
  let strays = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return { offset: i, why: 'a NUL byte' };
    // a stray control code or two happens in exported text; many do not
    if (isStrayControl(c) && ++strays > 8) return { offset: i, why: 'control codes that text does not contain' };
  }
  return null;
}

/** A sentence saying the file is not text and what it seems to be, or null when it reads as text. */
export async function notTextProblem(file: string, expected = 'a CSV text file'): Promise<string | null> {
  const fh = await open(file, 'r');
  let head: Uint8Array;
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, HEAD_BYTES, 0);
    head = buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
  if (head.length === 0) return null;
  const known = SIGNATURES.find((s) => s.bytes.every((b, i) => head[i] === b));
  const found = firstNonText(head);
  if (!found && !known) return null;
  // a PDF starts as ASCII: its signature alone decides
  const what = known ? known.what : 'a binary file';
  const where = found ? ` (${found.why} at byte ${found.offset + 1})` : '';
  return `this is not text but ${what}${where}; the input must be ${expected}: save or export it as CSV (UTF-8) and try again`;
}
