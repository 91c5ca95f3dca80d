/**
 * Content checks of one artifact against its contract: JSON parses and matches its schema, Markdown has
 * its headings. Shared by the write tools (before they write) and the runtime's stop hooks (after the
 * run), so both say the same thing. Messages name the file, the field path and the offending value.
 */
import { checkSchema, formatSchemaPath, type Schema } from './schema.js';

/** The part of an artifact contract the content checks read (structurally the runtime's ArtifactContract). */
export interface ArtifactContentContract {
  path: string;
  type: string;
  schema?: Schema;
  requiredHeadings?: string[];
}

/** Structurally the runtime's ValidationIssue. */
export interface ContentIssue {
  check: string;
  path?: string;
  message: string;
}

/** Render an issue path the way people write it: themes[0].evidence[1].feedback_id */
export const formatPath = formatSchemaPath;

/** The value at a path, for messages; undefined when absent. */
export function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

export function preview(v: unknown, max = 80): string {
  const s = v === undefined ? 'undefined' : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

export function markdownHeadings(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (m) out.push(m[1].trim().toLowerCase());
  }
  return out;
}

export function parseJsonArtifact(path: string, textValue: string): { ok: true; value: unknown } | { ok: false; issue: ContentIssue } {
  try {
    return { ok: true, value: JSON.parse(textValue) };
  } catch (e) {
    return { ok: false, issue: { check: 'json_parse', path, message: `${path} is not valid JSON: ${(e as Error).message}` } };
  }
}

export function checkJsonValue(contract: ArtifactContentContract, value: unknown, limit = 20): ContentIssue[] {
  if (!contract.schema) return [];
  const r = checkSchema(contract.schema, value);
  if (r.ok) return [];
  return r.issues.slice(0, limit).map((i) => ({
    check: 'json_schema',
    path: contract.path,
    message: `${contract.path}: ${formatPath(i.path)}: ${i.message}${i.message.includes(' got ') ? '' : ` (value: ${preview(valueAt(value, i.path))})`}`,
  }));
}

export function checkMarkdown(contract: ArtifactContentContract, markdown: string): ContentIssue[] {
  const issues: ContentIssue[] = [];
  if (markdown.trim() === '') issues.push({ check: 'markdown_heading', path: contract.path, message: `${contract.path} is empty` });
  const have = markdownHeadings(markdown);
  for (const h of contract.requiredHeadings ?? []) {
    if (!have.includes(h.trim().toLowerCase())) {
      issues.push({
        check: 'markdown_heading',
        path: contract.path,
        message: `${contract.path} lacks the heading "${h}" (found: ${have.map((x) => JSON.stringify(x)).join(', ') || 'none'})`,
      });
    }
  }
  return issues;
}

/** All contract checks for one file's text. */
export function checkArtifactText(contract: ArtifactContentContract, textValue: string): ContentIssue[] {
  if (contract.type === 'json') {
    const p = parseJsonArtifact(contract.path, textValue);
    return p.ok ? checkJsonValue(contract, p.value) : [p.issue];
  }
  if (contract.type === 'markdown') return checkMarkdown(contract, textValue);
  return [];
}

export function findContract(contracts: ArtifactContentContract[], path: string): ArtifactContentContract | undefined {
  const rel = path.replace(/^\.?\//, '').replace(/^artifacts\//, '');
  return contracts.find((c) => c.path === rel);
}
