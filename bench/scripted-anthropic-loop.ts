/**
 * A scripted agent loop in the Anthropic format: the real AgentLoop, ToolExecutor and Anthropic
 * provider (AI SDK) against the loopback Messages server, N turns of thinking + a tool call, then
 * an answer. What bench/prompt-cache.bench.ts measures and the loop tests check.
 */
import { z } from 'zod';
import { createAiSdkProvider } from '../src/providers/ai-sdk-provider.js';
import type { ReasoningEffort } from '../src/providers/model-provider.js';
import { AgentLoop, DEFAULT_LIMITS, type LoopOutcome } from '../src/runtime/loop/agent-loop.js';
import { RunMetrics, type RunMetricsFile } from '../src/runtime/metrics/run-metrics.js';
import { noopPublish, publishing } from '../src/runtime/run-publisher.js';
import { ToolExecutor } from '../src/runtime/loop/tool-executor.js';
import type { AnyToolDefinition, ToolImage } from '../src/tools/tool.js';
import { startAnthropicLoopback, type ReceivedMessagesRequest, type ScriptedTurn } from './anthropic-loopback.js';

export interface ScriptedLoopOptions {
  /** Model turns in all, the last one the answer. */
  turns: number;
  model?: string;
  reasoning?: ReasoningEffort;
  /** The prompt cache's minimum prefix (Anthropic: 1,024 tokens for Sonnet and Opus, 4,096 for Haiku 4.5). */
  minCacheTokens?: number;
  /** An image the `screenshot` tool returns, for the image path. */
  image?: ToolImage;
  contextTokens?: number;
}

export interface ScriptedLoopResult {
  outcome: LoopOutcome;
  requests: ReceivedMessagesRequest[];
  metrics: RunMetricsFile;
  turnLines: string;
  loop: AgentLoop;
}

/** A system prompt the size of a real one (~1,500 tokens): the part of every request that never changes. */
export function benchSystemPrompt(): string {
  const guidance = Array.from(
    { length: 40 },
    (_, i) => `- Guideline ${i + 1}: cite the rows you used, keep claims tied to evidence, and say what is uncertain.`,
  );
  return [
    'You are an agent running inside Runtrail. Act only through the tools listed below.',
    '',
    '## Business Guidance',
    '',
    ...guidance,
    '',
    '## Permission Boundaries',
    '',
    '- Read only under input/ and artifacts/.',
  ].join('\n');
}

const rows = (page: number) => Array.from({ length: 30 }, (_, i) => `${page * 30 + i + 1},"sync failed after update on device ${i % 7}",negative`).join('\n');

function benchTools(image?: ToolImage): AnyToolDefinition[] {
  const tool = (
    name: string,
    description: string,
    parameters: z.ZodType,
    execute: (args: never) => Promise<{ ok: boolean; content: string; images?: ToolImage[] }>,
  ): AnyToolDefinition => ({
    name,
    description,
    parameters,
    execute,
  });
  return [
    tool(
      'read_feedback_csv',
      'Read a page of the feedback CSV: 30 rows.',
      z.object({ page: z.number().int().min(0), path: z.string().default('input/feedback.csv') }),
      async (a: { page: number }) => ({ ok: true, content: `id,text,sentiment\n${rows(a.page)}` }),
    ),
    tool('list_artifacts', 'List the artifacts written so far.', z.object({}), async () => ({ ok: true, content: '[]' })),
    tool('write_json_artifact', 'Write a JSON artifact under artifacts/.', z.object({ path: z.string(), value: z.unknown() }), async () => ({
      ok: true,
      content: 'written',
    })),
    tool('write_markdown_artifact', 'Write a Markdown artifact under artifacts/.', z.object({ path: z.string(), markdown: z.string() }), async () => ({
      ok: true,
      content: 'written',
    })),
    tool('screenshot', 'Capture the dashboard as a PNG.', z.object({}), async () => ({
      ok: true,
      content: 'dashboard.png',
      ...(image ? { images: [image] } : {}),
    })),
  ];
}

/** Turns 1..n-1 think and read a page (the first may take a screenshot); turn n answers. */
export function scriptedTurns(n: number, withImage: boolean): ScriptedTurn[] {
  const out: ScriptedTurn[] = [];
  for (let i = 0; i < n - 1; i++) {
    const use = withImage && i === 0 ? { name: 'screenshot', input: {} } : { name: 'read_feedback_csv', input: { page: i, path: 'input/feedback.csv' } };
    out.push({ thinking: `Page ${i} next: the sync complaints cluster around updates.`, text: i === 0 ? 'Reading the feedback.' : '', toolUses: [use] });
  }
  out.push({ thinking: 'Enough evidence.', text: 'Sync failures after updates are the top issue.' });
  return out;
}

export async function runScriptedAnthropicLoop(o: ScriptedLoopOptions): Promise<ScriptedLoopResult> {
  const server = await startAnthropicLoopback(scriptedTurns(o.turns, o.image !== undefined), { minCacheTokens: o.minCacheTokens ?? 1024 });
  try {
    const provider = createAiSdkProvider({
      provider: 'anthropic',
      model: o.model ?? 'claude-sonnet-4-5',
      baseURL: server.baseURL,
      env: { ANTHROPIC_API_KEY: 'sk-loopback-not-a-key' },
    });
    const tools = benchTools(o.image);
    const ac = new AbortController();
    const metrics = new RunMetrics();
    // the metrics follow what the loop and its executor publish, as a run's do
    const publish = publishing((e) => metrics.follow(e), noopPublish);
    const executor = new ToolExecutor({ tools, allowedTools: tools.map((t) => t.name), signal: ac.signal, publish });
    const loop = new AgentLoop({
      provider,
      system: benchSystemPrompt(),
      messages: [{ role: 'user', content: 'Find the most important product problems in input/feedback.csv.' }],
      executor,
      publish,
      limits: { ...DEFAULT_LIMITS, max_iterations: o.turns + 2, ...(o.contextTokens !== undefined ? { context_tokens: o.contextTokens } : {}) },
      reasoning: o.reasoning ?? 'low',
      cacheKey: 'runtrail-bench',
      signal: ac.signal,
    });
    try {
      const outcome = await loop.run();
      return {
        outcome,
        requests: server.requests,
        metrics: metrics.toFile({ runId: 'bench', status: outcome.kind === 'final' ? 'completed' : 'failed', durationMs: 0, stages: {}, events: 0 }),
        turnLines: metrics.turnLines(),
        loop,
      };
    } finally {
      loop.dispose();
    }
  } finally {
    await server.close();
  }
}
