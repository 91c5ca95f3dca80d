/**
 * The offline model's brain for feedbacklens: reads the conversation so far and picks the next
 * turn, walking the plan through the same tools a real model uses. Deterministic.
 */
import type { ModelTurn, OfflineProcedure } from '../../runtime/agent.js';
import { argPath, currentGoal, failures, lastOk, summarizeToolResults, toolResults, type SeenToolResult } from '../shared/conversation.js';
import type { FeedbackStats, ThemeSummary } from './analysis/analyse-feedback.js';
import { goalSegment, scopeSentence, type SegmentColumn } from './goal-segment.js';
import { FEEDBACK_ANALYSIS_FILE, INSIGHT_REPORT_FILE, PRODUCT_BACKLOG_FILE } from './artifact-schemas.js';
import { buildFeedbackAnalysis, buildFinalAnswer, buildInsightReport, buildProductBacklog, type ArtifactInputs } from './build-artifacts.js';

/** Above this many rows the procedure asks the compute skill for a profile, when the tool is offered. */
export const COMPUTE_SKILL_THRESHOLD = 5_000;
export const EXECUTE_SKILL_TOOL = 'execute_skill';
export const CSV_PROFILE_SKILL = 'csv_profile';
const MAX_FAILURES = 2;

/**
 * Ends the run as failed, with the tool's own diagnosis as the run's: no final answer is given,
 * since one would read as a completed analysis of data that could not be analysed.
 */
function giveUp(what: string, r: SeenToolResult[], code = 'analysis_failed'): ModelTurn {
  const last = r[r.length - 1];
  const why = last ? ((last.data?.error as string | undefined) ?? last.content).slice(0, 1500) : 'unknown error';
  const hint = typeof last?.data?.hint === 'string' ? ` (${last.data.hint})` : '';
  // said once, in the user's terms: the file is unusable, or which step stopped the analysis and why
  const tries = r.length > 1 ? ` (${r.length} tries)` : '';
  const message =
    code === 'input_unusable' ? `The feedback file cannot be analysed: ${why}${hint}` : `The analysis stopped while ${what}${tries}: ${why}${hint}`;
  return { error: { code, message, retryable: false } };
}

/** "(12000 rows, 5 columns; artifacts/csv_profile.json)" from execute_skill's content, which ends in the skill's JSON result. */
function describeProfile(content: string): string {
  const at = content.indexOf('{');
  if (at < 0) return '';
  try {
    const p = JSON.parse(content.slice(at)) as { rows?: unknown; columns?: unknown; output_path?: unknown };
    const parts: string[] = [];
    if (typeof p.rows === 'number') parts.push(p.rows === 1 ? '1 row' : `${p.rows} rows`);
    if (Array.isArray(p.columns)) parts.push(`${p.columns.length} columns`);
    const where = typeof p.output_path === 'string' ? `; ${p.output_path}` : '';
    return parts.length ? ` (${parts.join(', ')}${where})` : '';
  } catch {
    return '';
  }
}

function call(name: string, args: unknown): { name: string; args: unknown } {
  return { name, args };
}

export const feedbackLensOfflineProcedure: OfflineProcedure = (state): ModelTurn => {
  const results = toolResults(state.messages);
  const offered = new Set(state.tools.map((t) => t.name));

  // 1. Read and validate the data.
  const read = lastOk(results, 'read_feedback_csv');
  if (!read) {
    const f = failures(results, 'read_feedback_csv');
    // the file itself is the problem (missing, no text column, ...): reading it again cannot help
    if (f.length >= 1) return giveUp('reading the CSV', f, 'input_unusable');
    return { reasoning: 'Step 1: read the feedback CSV and build the evidence index.', toolCalls: [call('read_feedback_csv', { offset: 0, limit: 20 })] };
  }
  const readData = read.data ?? {};
  const totalRows = Number(readData.total_rows ?? 0);
  const csvPath = String(readData.csv_path ?? 'input.csv');
  // the goal read for a segment it names (iOS, enterprise, 移动端): the analysis narrows to it
  const segmentCols = Array.isArray(readData.segment_columns) ? (readData.segment_columns as SegmentColumn[]) : [];
  const segment = goalSegment(currentGoal(state.messages), segmentCols);
  // each turn its own step number, in the order they come (profiling is a step only when it runs)
  const profiling = totalRows > COMPUTE_SKILL_THRESHOLD && offered.has(EXECUTE_SKILL_TOOL);
  const stepOrder = ['read', ...(profiling ? ['profile'] : []), 'stats', 'quotes', 'analysis', 'backlog', 'report', 'confirm'];
  const step = (name: string, what: string): string => `Step ${stepOrder.indexOf(name) + 1}: ${what}`;

  // Large inputs: profile with the compute skill when the runtime offers it (one attempt).
  let profileNote: string | undefined;
  if (profiling) {
    const tried = results.filter((r) => r.name === EXECUTE_SKILL_TOOL);
    if (tried.length === 0) {
      return {
        reasoning: step('profile', `${totalRows} rows; profiling the file with the ${CSV_PROFILE_SKILL} compute skill first.`),
        toolCalls: [call(EXECUTE_SKILL_TOOL, { skill: CSV_PROFILE_SKILL, input: { csv_path: csvPath } })],
      };
    }
    const ok = tried.find((r) => r.ok);
    profileNote = ok
      ? `The ${totalRows}-row file was profiled with the ${CSV_PROFILE_SKILL} compute skill before analysis${describeProfile(ok.content)}.`
      : `The ${CSV_PROFILE_SKILL} compute skill failed; the analysis ran in-process instead.`;
  }

  // 2. Structured analysis: statistics and themes over every row.
  const statsResult = lastOk(results, 'feedback_stats');
  if (!statsResult) {
    const f = failures(results, 'feedback_stats');
    if (f.length >= MAX_FAILURES) return giveUp('computing statistics', f);
    return {
      reasoning: step(
        'stats',
        segment
          ? `sentiment, themes and priorities over the rows whose ${segment.column} is ${segment.values.join(' or ')}, the segment the goal names.`
          : 'sentiment, themes and priorities over all rows.',
      ),
      toolCalls: [call('feedback_stats', segment ? { segment } : {})],
    };
  }
  const stats = statsResult.data as unknown as FeedbackStats & { id_source?: 'column' | 'generated' };

  // Quotes: one extract_evidence call per theme, in one turn.
  const evidenceResults = results.filter((r) => r.name === 'extract_evidence');
  if (evidenceResults.length === 0) {
    const calls = stats.themes.map((t: ThemeSummary) =>
      call('extract_evidence', { feedback_ids: t.representative_ids.slice(0, 3), terms: t.key_terms.slice(0, 5) }),
    );
    return { reasoning: step('quotes', `quoting real feedback for ${calls.length === 1 ? 'the theme' : `${calls.length} themes`}.`), toolCalls: calls };
  }
  const quotes = new Map<string, string>();
  for (const r of evidenceResults) {
    if (!r.ok) continue;
    for (const e of (r.data?.evidence as Array<{ feedback_id: string; evidence_text: string }> | undefined) ?? []) {
      if (!quotes.has(e.feedback_id)) quotes.set(e.feedback_id, e.evidence_text);
    }
  }
  if (quotes.size === 0) return giveUp('extracting evidence', evidenceResults);

  const inputs: ArtifactInputs = {
    productName: typeof readData.product_name === 'string' && readData.product_name ? readData.product_name : 'the product',
    goal: currentGoal(state.messages).trim(),
    csvPath,
    totalRows,
    idSource: stats.id_source === 'generated' ? 'generated' : 'column',
    stats,
    quotes,
    ...(profileNote ? { profileNote } : {}),
    scope: scopeSentence(stats.segment ?? null, segmentCols),
  };
  const analysis = buildFeedbackAnalysis(inputs);
  const backlog = buildProductBacklog(inputs);

  // 2–4. Write the three artifacts, one per turn, in plan order.
  const steps: Array<{ path: string; tool: string; args: () => unknown; why: string }> = [
    {
      path: FEEDBACK_ANALYSIS_FILE,
      tool: 'write_json_artifact',
      args: () => ({ path: FEEDBACK_ANALYSIS_FILE, content: analysis }),
      why: step('analysis', 'write the structured analysis.'),
    },
    {
      path: PRODUCT_BACKLOG_FILE,
      tool: 'write_json_artifact',
      args: () => ({ path: PRODUCT_BACKLOG_FILE, content: backlog }),
      why: step('backlog', 'write the prioritised backlog.'),
    },
    {
      path: INSIGHT_REPORT_FILE,
      tool: 'write_markdown_artifact',
      args: () => ({ path: INSIGHT_REPORT_FILE, content: buildInsightReport(inputs, analysis, backlog) }),
      why: step('report', 'write the insight report.'),
    },
  ];
  for (const s of steps) {
    const isThis = (a: unknown): boolean => argPath(a) === s.path;
    if (lastOk(results, s.tool, isThis)) continue;
    const f = failures(results, s.tool, isThis);
    if (f.length >= MAX_FAILURES) return giveUp(`writing ${s.path}`, f);
    return { reasoning: s.why, toolCalls: [call(s.tool, s.args())] };
  }

  // 4. Confirm what exists, then answer.
  const listed = lastOk(results, 'list_artifacts');
  if (!listed && failures(results, 'list_artifacts').length < MAX_FAILURES) {
    return { reasoning: step('confirm', 'confirm the artifacts exist.'), toolCalls: [call('list_artifacts', {})] };
  }
  const files = ((listed?.data?.artifacts as Array<{ path: string }> | undefined) ?? []).map((a) => a.path);
  return { text: buildFinalAnswer(inputs, backlog, files.length ? files : steps.map((s) => s.path)) };
};

/**
 * The summary this procedure writes when the loop compacts its context: the results it reads back
 * (the CSV's facts without its sample rows, the statistics, the quotes, which artifacts were
 * written), so it carries on from where it was; the bulky parts (rows, artifact bodies) go.
 */
feedbackLensOfflineProcedure.summarize = (turns) => summarizeToolResults(turns, keepForLater);

function keepForLater(r: SeenToolResult): SeenToolResult | null {
  const slim = (data: Record<string, unknown> | null, args: unknown = r.args): SeenToolResult => ({
    name: r.name,
    ok: r.ok,
    data,
    content: r.ok ? '' : r.content.slice(0, 500),
    args,
  });
  switch (r.name) {
    case 'read_feedback_csv': {
      if (!r.data) return slim(null);
      const { rows: _rows, ...facts } = r.data;
      return slim(facts);
    }
    case 'feedback_stats':
    case 'list_artifacts':
      return slim(r.data);
    case 'extract_evidence':
      return slim(r.data ? { ok: r.data.ok, evidence: r.data.evidence } : null);
    case 'write_json_artifact':
    case 'write_markdown_artifact':
      return slim({ ok: r.ok }, { path: argPath(r.args) });
    case EXECUTE_SKILL_TOOL:
      return { ...slim(r.data), content: r.content.slice(0, 4000) };
    default:
      return slim(null);
  }
}
