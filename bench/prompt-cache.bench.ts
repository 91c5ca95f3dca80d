// Prompt caching in a 10-turn loop in the Anthropic format: request bytes per turn and the share of
// input tokens read from the cache, against the loopback Messages server (bench/anthropic-loopback.ts).
// The baseline is the same loop's cost with every input token charged uncached.
import { modelCost } from '../src/providers/model-catalog.js';
import { runScriptedAnthropicLoop } from './scripted-anthropic-loop.js';

const TURNS = 10;
const MODEL = 'claude-sonnet-4-5';

export async function run(): Promise<void> {
  const r = await runScriptedAnthropicLoop({ turns: TURNS, model: MODEL, reasoning: 'low', minCacheTokens: 1024 });
  if (r.outcome.kind !== 'final') throw new Error(`the scripted loop did not finish: ${JSON.stringify(r.outcome)}`);
  console.log(`${TURNS}-turn loop, anthropic:${MODEL}, thinking low, breakpoints on tools + system + newest message:`);
  console.log('  turn  request bytes  input tok  cache read  cache write  cached share');
  let bytes = 0;
  let input = 0;
  let read = 0;
  let uncachedUsd = 0;
  r.requests.forEach((q, i) => {
    const u = q.usage;
    const total = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    bytes += q.bytes;
    input += total;
    read += u.cache_read_input_tokens;
    uncachedUsd += modelCost('anthropic', MODEL, { inputTokens: total, outputTokens: u.output_tokens }) ?? 0;
    const share = total ? (100 * u.cache_read_input_tokens) / total : 0;
    console.log(
      `  ${String(i + 1).padStart(4)}  ${String(q.bytes).padStart(13)}  ${String(total).padStart(9)}  ${String(u.cache_read_input_tokens).padStart(10)}  ${String(u.cache_creation_input_tokens).padStart(11)}  ${share.toFixed(1).padStart(11)}%`,
    );
  });
  const cost = r.metrics.cost_usd ?? 0;
  console.log(
    `  all   ${String(bytes).padStart(13)}  ${String(input).padStart(9)}  ${String(read).padStart(10)}  ${String(r.metrics.tokens.cache_write).padStart(11)}  ${((100 * read) / input).toFixed(1).padStart(11)}%`,
  );
  console.log(`  cost $${cost.toFixed(6)} with the cache, $${uncachedUsd.toFixed(6)} uncached: ×${(cost / uncachedUsd).toFixed(2)} of the baseline`);
}
