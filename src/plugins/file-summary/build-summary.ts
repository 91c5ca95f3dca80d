/** The summary.md the offline model writes, from an extractive summary. */
import { basename } from 'node:path';
import type { ExtractiveSummary } from './analysis/extractive-summary.js';

export function buildSummaryMarkdown(path: string, s: ExtractiveSummary): string {
  const name = basename(path);
  const lines = [`# Summary of ${s.title ?? name}`, '', '## Summary', '', s.summary.join(' '), '', '## Key Points', ''];
  for (const p of s.keyPoints) lines.push(`- ${p}`);
  if (s.keywords.length) lines.push('', '## Keywords', '', s.keywords.join(', '));
  lines.push(
    '',
    `_Extractive summary of \`${name}\` (${s.wordCount} words, ${s.sentenceCount} sentences): the sentences above are quoted from the source, chosen by word-frequency scoring._`,
    '',
  );
  return lines.join('\n');
}
