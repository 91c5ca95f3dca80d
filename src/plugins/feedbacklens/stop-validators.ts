/**
 * feedbacklens stop validators: every cited feedback_id exists in the evidence index, and
 * (evidence_text is verbatim from that row). Checks 1–4 (files, JSON, schema, headings) come from
 * the artifact contract; `contractValidator` runs them too when a caller wants all six in one place.
 */
import type { StopValidator, ValidationContext, ValidationIssue } from '../../runtime/agent.js';
import { parseJsonArtifact } from '../../tools/artifact-contract-checks.js';
import { CHECK_ID_EXISTS, CHECK_VERBATIM, checkEvidence, citedIds } from './evidence-checks.js';
import { EVIDENCE_INDEX_FILE, lookupEvidence } from './evidence-index.js';
import { FEEDBACK_ANALYSIS_FILE, PRODUCT_BACKLOG_FILE } from './artifact-schemas.js';

const CITING_FILES = [FEEDBACK_ANALYSIS_FILE, PRODUCT_BACKLOG_FILE];

async function evidenceIssues(ctx: ValidationContext<unknown>, check: string): Promise<ValidationIssue[]> {
  const docs: Array<{ file: string; value: unknown }> = [];
  for (const file of CITING_FILES) {
    let textValue: string;
    try {
      textValue = await ctx.workspace.readText(`artifacts/${file}`);
    } catch {
      continue; // a missing file is the required-output check's finding
    }
    const parsed = parseJsonArtifact(file, textValue);
    if (parsed.ok) docs.push({ file, value: parsed.value });
  }
  if (docs.length === 0) return [];
  const index = await lookupEvidence(
    ctx.workspace,
    docs.flatMap((d) => [...citedIds(d.value)]),
  );
  if (typeof index === 'string') return [{ check, path: `runtime/${EVIDENCE_INDEX_FILE}`, message: index }];
  return docs.flatMap((d) => checkEvidence(d.file, d.value, index)).filter((i) => i.check === check);
}

export const feedbackIdsExistValidator: StopValidator<unknown> = {
  name: 'FeedbackIdsExist',
  validate: (ctx) => evidenceIssues(ctx, CHECK_ID_EXISTS),
};

export const evidenceVerbatimValidator: StopValidator<unknown> = {
  name: 'EvidenceVerbatim',
  validate: (ctx) => evidenceIssues(ctx, CHECK_VERBATIM),
};
