/** The offline model's brain for file_summary: read every slice, summarise extractively, write summary.md. */
import type { ModelTurn, OfflineProcedure } from '../../runtime/agent.js';
import { failures, lastOk, toolResults } from '../shared/conversation.js';
import { summarise } from './analysis/extractive-summary.js';
import { buildSummaryMarkdown } from './build-summary.js';

/** Slices read at most (20,000 characters each): enough for long notes, bounded for huge files. */
export const MAX_SLICES = 10;

export const fileSummaryOfflineProcedure: OfflineProcedure = (state): ModelTurn => {
  const results = toolResults(state.messages);
  const reads = results.filter((r) => r.name === 'read_text_file' && r.ok);
  if (reads.length === 0) {
    const f = failures(results, 'read_text_file');
    if (f.length >= 2) return { text: `I could not read the file: ${String(f[f.length - 1].data?.error ?? f[f.length - 1].content).slice(0, 500)}` };
    return { reasoning: 'Read the document.', toolCalls: [{ name: 'read_text_file', args: { offset: 0 } }] };
  }
  const last = reads[reads.length - 1].data ?? {};
  if (typeof last.next_offset === 'number' && reads.length < MAX_SLICES) {
    return { reasoning: 'Read the next slice.', toolCalls: [{ name: 'read_text_file', args: { offset: last.next_offset } }] };
  }
  const text = reads.map((r) => String(r.data?.text ?? '')).join('');
  const path = String(last.path ?? 'document');
  const summary = summarise(text);
  const written = lastOk(results, 'write_summary');
  if (!written) {
    const f = failures(results, 'write_summary');
    if (f.length >= 2) return { text: `I could not write summary.md: ${String(f[f.length - 1].data?.detail ?? f[f.length - 1].content).slice(0, 500)}` };
    // a retry after a length rejection asks for fewer sentences
    const s = f.length === 0 ? summary : summarise(text, { maxSentences: 3, maxKeyPoints: 3 });
    return {
      reasoning: 'Write the summary with its required sections.',
      toolCalls: [{ name: 'write_summary', args: { content: buildSummaryMarkdown(path, s) } }],
    };
  }
  const truncated = typeof last.next_offset === 'number' ? ` (first ${MAX_SLICES} slices of a longer file)` : '';
  return { text: `Summary of ${path}${truncated}, written to summary.md:\n\n${summary.summary.join(' ')}` };
};
