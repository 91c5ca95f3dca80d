// Model-provider overhead: what our wrappers add per streamed part, against baselines measured here.
import { streamText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { LanguageModelProvider } from '../src/providers/ai-sdk-provider.js';
import { createOfflineProvider } from '../src/providers/offline-provider.js';
import type { ModelRequest } from '../src/providers/model-provider.js';

const DELTAS = 2000;
const ROUNDS = 30;

function parts(): LanguageModelV3StreamPart[] {
  const out: LanguageModelV3StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
  ];
  for (let i = 0; i < DELTAS; i++) out.push({ type: 'text-delta', id: 't', delta: 'word ' });
  out.push({ type: 'text-end', id: 't' });
  out.push({
    type: 'finish',
    usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: DELTAS, text: DELTAS, reasoning: 0 } },
    finishReason: { unified: 'stop', raw: 'stop' },
  });
  return out;
}

function streamOf(items: LanguageModelV3StreamPart[]): ReadableStream<LanguageModelV3StreamPart> {
  return new ReadableStream({
    start(c) {
      for (const p of items) c.enqueue(p);
      c.close();
    },
  });
}

async function median(fn: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  await fn(); // warm-up
  for (let i = 0; i < ROUNDS; i++) {
    const t = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const request: ModelRequest = { system: 's', messages: [{ role: 'user', content: 'go' }], tools: [] };

export async function run(): Promise<void> {
  const items = parts();
  // Baseline: reading the model's own stream with nothing on top.
  const raw = await median(async () => {
    const reader = streamOf(items).getReader();
    while (!(await reader.read()).done) {
      /* drain */
    }
  });
  const model = new MockLanguageModelV3({ doStream: async () => ({ stream: streamOf(items) }) });
  // Second baseline: the SDK's streamText alone, so our own mapping cost shows separately.
  const sdk = await median(async () => {
    const r = streamText({ model, messages: [{ role: 'user', content: 'go' }], maxRetries: 0 });
    for await (const _ of r.fullStream) void _;
  });
  const provider = new LanguageModelProvider(model, { provider: 'mock', model: 'bench' });
  const wrapped = await median(async () => {
    for await (const _ of provider.stream(request)) void _;
  });
  const text = Array.from({ length: DELTAS }, () => 'word').join(' ');
  const offline = createOfflineProvider(() => ({ text }));
  const off = await median(async () => {
    for await (const _ of offline.stream(request)) void _;
  });
  const perPart = (ms: number) => ((ms * 1000) / DELTAS).toFixed(2);
  console.log(`stream of ${DELTAS} text deltas, median of ${ROUNDS}:`);
  console.log(`  raw ReadableStream drain        ${raw.toFixed(2)} ms  (${perPart(raw)} µs/part)  baseline`);
  console.log(`  AI SDK streamText alone         ${sdk.toFixed(2)} ms  (${perPart(sdk)} µs/part)  ×${(sdk / raw).toFixed(1)}`);
  console.log(
    `  streamText + our mapping        ${wrapped.toFixed(2)} ms  (${perPart(wrapped)} µs/part)  ×${(wrapped / raw).toFixed(1)}, ×${(wrapped / sdk).toFixed(2)} of streamText alone`,
  );
  console.log(`  offline provider (${DELTAS} words)  ${off.toFixed(2)} ms  (${perPart(off)} µs/part)  ×${(off / raw).toFixed(1)}`);
}
