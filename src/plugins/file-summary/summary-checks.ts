/** Length checks for summary.md: every required section has text; short enough to be a summary. */
import type { ValidationIssue } from '../../runtime/agent.js';
import { SHORT_SOURCE_WORDS, SUMMARY_FILE, SUMMARY_HEADINGS, SUMMARY_MAX_SHARE, SUMMARY_MAX_WORDS } from './artifact-contract.js';

export function wordCount(s: string): number {
  const m = s.match(/\S+/g);
  return m ? m.length : 0;
}

/** Text under each heading (until the next heading of any level). */
function sections(markdown: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | null = null;
  for (const line of markdown.split(/\r?\n/)) {
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      current = h[1].trim().toLowerCase();
      out.set(current, '');
    } else if (current !== null) out.set(current, `${out.get(current)}${line}\n`);
  }
  return out;
}

export function checkSummaryLength(markdown: string, sourceWords: number | null): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const secs = sections(markdown);
  for (const h of SUMMARY_HEADINGS) {
    const body = secs.get(h.toLowerCase());
    if (body !== undefined && wordCount(body) === 0) {
      issues.push({ check: 'summary_length', path: SUMMARY_FILE, message: `${SUMMARY_FILE}: section "${h}" is empty` });
    }
  }
  const words = wordCount(markdown);
  if (words > SUMMARY_MAX_WORDS) {
    issues.push({ check: 'summary_length', path: SUMMARY_FILE, message: `${SUMMARY_FILE}: ${words} words; a summary has at most ${SUMMARY_MAX_WORDS}` });
  }
  if (sourceWords !== null && sourceWords > SHORT_SOURCE_WORDS && words > sourceWords * SUMMARY_MAX_SHARE) {
    issues.push({
      check: 'summary_length',
      path: SUMMARY_FILE,
      message: `${SUMMARY_FILE}: ${words} words for a ${sourceWords}-word source; at most ${Math.floor(sourceWords * SUMMARY_MAX_SHARE)} (${SUMMARY_MAX_SHARE * 100}%)`,
    });
  }
  return issues;
}
