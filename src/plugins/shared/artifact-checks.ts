/**
 * Content checks of one artifact against its contract (JSON parses, schema, Markdown headings),
 * used before a write tool writes and by validators. Messages name the file, the field path and the value.
 */
import type { ArtifactContract, ValidationIssue } from '../../runtime/business-plugin.js';
import { formatPath, preview, valueAt } from './schema-helpers.js';

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

export function parseJsonArtifact(path: string, textValue: string): { ok: true; value: unknown } | { ok: false; issue: ValidationIssue } {
  try {
    return { ok: true, value: JSON.parse(textValue) };
  } catch (e) {
    return { ok: false, issue: { check: 'json_parse', path, message: `${path} is not valid JSON: ${(e as Error).message}` } };
  }
}

export function checkJsonValue(contract: ArtifactContract, value: unknown, limit = 20): ValidationIssue[] {
  if (!contract.schema) return [];
  const r = contract.schema.safeParse(value);
  if (r.success) return [];
  return r.error.issues.slice(0, limit).map((i) => ({
    check: 'json_schema',
    path: contract.path,
    message: `${contract.path}: ${formatPath(i.path)}: ${i.message}${
      i.code === 'invalid_value' || i.message.includes(' got ') ? '' : ` (value: ${preview(valueAt(value, i.path))})`
    }`,
  }));
}

export function checkMarkdown(contract: ArtifactContract, markdown: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (markdown.trim() === '') issues.push({ check: 'markdown_heading', path: contract.path, message: `${contract.path} is empty` });
  const have = markdownHeadings(markdown);
  for (const h of contract.requiredHeadings ?? []) {
    if (!have.includes(h.trim().toLowerCase())) {
      issues.push({ check: 'markdown_heading', path: contract.path, message: `${contract.path} lacks the heading "${h}" (found: ${have.map((x) => JSON.stringify(x)).join(', ') || 'none'})` });
    }
  }
  return issues;
}

/** All contract checks for one file's text. */
export function checkArtifactText(contract: ArtifactContract, textValue: string): ValidationIssue[] {
  if (contract.type === 'json') {
    const p = parseJsonArtifact(contract.path, textValue);
    return p.ok ? checkJsonValue(contract, p.value) : [p.issue];
  }
  if (contract.type === 'markdown') return checkMarkdown(contract, textValue);
  return [];
}

export function findContract(contracts: ArtifactContract[], path: string): ArtifactContract | undefined {
  const rel = path.replace(/^\.?\//, '').replace(/^artifacts\//, '');
  return contracts.find((c) => c.path === rel);
}
