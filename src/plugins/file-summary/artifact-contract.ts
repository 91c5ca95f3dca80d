/** file_summary delivers one Markdown file, summary.md, with two required sections. */
import type { ArtifactContract } from '../../runtime/agent.js';

export const SUMMARY_FILE = 'summary.md';
export const SUMMARY_HEADINGS = ['Summary', 'Key Points'];
/** A summary is a digest, not a copy: at most this many words ... */
export const SUMMARY_MAX_WORDS = 1_500;
/** ... and, for sources longer than SHORT_SOURCE_WORDS, at most this share of the source's words. */
export const SUMMARY_MAX_SHARE = 0.6;
export const SHORT_SOURCE_WORDS = 300;

export const fileSummaryArtifacts: ArtifactContract[] = [
  {
    path: SUMMARY_FILE,
    type: 'markdown',
    audience: 'user',
    sensitivity: 'internal',
    description: `Summary of the input file with the sections: ${SUMMARY_HEADINGS.join(', ')}.`,
    required: true,
    requiredHeadings: SUMMARY_HEADINGS,
  },
];
