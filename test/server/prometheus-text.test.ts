import { describe, expect, it } from 'vitest';
import { prometheusText } from '../../src/server/prometheus-text.js';
import { newStreamCounters } from '../../src/server/stream-counters.js';
import { ModelUsageTotals } from '../../src/runtime/metrics/model-usage-totals.js';

describe('/metrics: model tokens and cost', () => {
  it('counts tokens by kind, the cost of priced calls and the calls without a price', () => {
    const totals = new ModelUsageTotals();
    totals.add({ input: 4354, output: 58, cached_input: 4096, cache_write: 212, reasoning: 0 }, 0.001011);
    totals.add({ input: 1000, output: 100, cached_input: 0, cache_write: 0, reasoning: 40 }, null);
    const text = prometheusText({ byState: {}, queueDepth: 0, running: 0, eventsPublished: 0, models: totals.snapshot() }, newStreamCounters());
    expect(text).toContain('# TYPE runtrail_model_tokens_total counter');
    expect(text).toMatch(/^runtrail_model_calls_total 2$/m);
    expect(text).toMatch(/^runtrail_model_tokens_total\{kind="input"\} 5354$/m);
    expect(text).toMatch(/^runtrail_model_tokens_total\{kind="cached_input"\} 4096$/m);
    expect(text).toMatch(/^runtrail_model_tokens_total\{kind="cache_write"\} 212$/m);
    expect(text).toMatch(/^runtrail_model_tokens_total\{kind="output"\} 158$/m);
    expect(text).toMatch(/^runtrail_model_tokens_total\{kind="reasoning"\} 40$/m);
    expect(text).toMatch(/^runtrail_model_cost_usd_total 0\.001011$/m);
    expect(text).toMatch(/^runtrail_model_unpriced_calls_total 1$/m);
  });

  it('a service without model figures prints none', () => {
    expect(prometheusText({ byState: {}, queueDepth: 0, running: 0, eventsPublished: 0 }, newStreamCounters())).not.toContain('runtrail_model_');
  });
});
