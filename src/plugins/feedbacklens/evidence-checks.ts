/**
 * The evidence checks: every feedback_id cited exists in the evidence index, and every
 * evidence_text is a verbatim part of that row (whitespace runs count as one space).
 */
import type { ValidationIssue } from '../../runtime/agent.js';
import { isVerbatimQuote } from './analysis/select-quote.js';
import { preview } from '../../tools/artifact-contract-checks.js';

export const CHECK_ID_EXISTS = 'feedback_id_exists';
export const CHECK_VERBATIM = 'evidence_verbatim';

function walk(value: unknown, path: string, visit: (obj: Record<string, unknown>, path: string) => void): void {
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`, visit));
  else if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    visit(obj, path);
    for (const [k, v] of Object.entries(obj)) walk(v, path ? `${path}.${k}` : k, visit);
  }
}

/** Every feedback_id a document cites (`feedback_id` fields and `feedback_ids` arrays, at any depth). */
export function citedIds(doc: unknown): Set<string> {
  const ids = new Set<string>();
  walk(doc, '', (obj) => {
    if (typeof obj.feedback_id === 'string') ids.add(obj.feedback_id);
    if (Array.isArray(obj.feedback_ids)) for (const id of obj.feedback_ids) if (typeof id === 'string') ids.add(id);
  });
  return ids;
}

/** `index` needs only the cited ids (citedIds); an id it lacks is not in the evidence index. */
export function checkEvidence(file: string, doc: unknown, index: Map<string, string>, limit = 50): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const push = (check: string, message: string): void => {
    if (issues.length < limit) issues.push({ check, path: file, message });
  };
  walk(doc, '', (obj, path) => {
    const at = (k: string): string => (path ? `${path}.${k}` : k);
    if ('feedback_id' in obj) {
      const id = obj.feedback_id;
      const rowText = typeof id === 'string' ? index.get(id) : undefined;
      if (rowText === undefined) {
        push(CHECK_ID_EXISTS, `${file}: ${at('feedback_id')}: ${preview(id)} is not in the evidence index`);
      } else if ('evidence_text' in obj) {
        const quote = obj.evidence_text;
        if (typeof quote !== 'string' || !isVerbatimQuote(quote, rowText)) {
          push(CHECK_VERBATIM, `${file}: ${at('evidence_text')}: ${preview(quote)} is not a verbatim part of feedback ${preview(id)}`);
        }
      }
    }
    if (Array.isArray(obj.feedback_ids)) {
      obj.feedback_ids.forEach((id, i) => {
        if (typeof id !== 'string' || !index.has(id))
          push(CHECK_ID_EXISTS, `${file}: ${at('feedback_ids')}[${i}]: ${preview(id)} is not in the evidence index`);
      });
    }
  });
  return issues;
}
