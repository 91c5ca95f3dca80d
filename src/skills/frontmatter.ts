/** YAML frontmatter of a Markdown definition (agents, Agent Skills): `---` YAML `---`, then the body. */
import { parseDocument } from 'yaml';

export type FrontmatterResult = { ok: true; data: Record<string, unknown>; body: string; hasFrontmatter: boolean } | { ok: false; message: string };

const OPEN = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*$/m;

export function parseFrontmatter(text: string): FrontmatterResult {
  const open = OPEN.exec(text);
  if (!open) return { ok: true, data: {}, body: text.replace(/^\uFEFF/, ''), hasFrontmatter: false };
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) return { ok: false, message: 'frontmatter is not closed: a line "---" must end it' };
  const yamlText = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, '');
  const doc = parseDocument(yamlText, { uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0];
    // +1: the opening `---` is line 1 of the file
    const line = e.linePos?.[0]?.line;
    const what = e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    return { ok: false, message: `frontmatter is not valid YAML${line ? ` (line ${line + 1})` : ''}: ${what}` };
  }
  const data = doc.toJS() as unknown;
  if (data === null || data === undefined) return { ok: true, data: {}, body, hasFrontmatter: true };
  if (typeof data !== 'object' || Array.isArray(data))
    return { ok: false, message: `frontmatter must be a YAML mapping (key: value lines), got ${Array.isArray(data) ? 'a list' : typeof data}` };
  return { ok: true, data: data as Record<string, unknown>, body, hasFrontmatter: true };
}
