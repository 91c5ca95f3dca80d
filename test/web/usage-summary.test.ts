import { describe, expect, it } from 'vitest';
import { usageRows } from '../../web/src/usage-summary.js';

describe('the metrics panel usage rows', () => {
  it('shows the tokens, the share read from the cache and the cost', () => {
    const rows = usageRows({
      tokens: { input: 36401, output: 900, cached_input: 30447, cache_write: 5954, reasoning: 0 },
      cost_usd: 0.036366,
      model_latency_ms: { turns: 10 },
    });
    expect(Object.fromEntries(rows!.map((r) => [r.label, r.value]))).toEqual({
      'Model calls': '10',
      'Input tokens': '36,401',
      'From cache': '30,447 (84%)',
      'Written to cache': '5,954',
      'Output tokens': '900',
      'Reasoning tokens': '0',
      Cost: '$0.0364',
    });
  });

  it('says the cost is unknown for a model without a price, and shows nothing for a non-metrics value', () => {
    expect(usageRows({ tokens: { input: 0, output: 0 }, cost_usd: null })!.find((r) => r.label === 'Cost')!.value).toBe('unknown (no price for this model)');
    expect(usageRows({ tokens: { input: 10, output: 1 }, cost_usd: 0.0000123 })!.find((r) => r.label === 'Cost')!.value).toBe('$0.000012');
    expect(usageRows({ tokens: { input: 10, output: 1 }, cost_usd: 0 })!.find((r) => r.label === 'Cost')!.value).toBe('$0');
    expect(usageRows(null)).toBeNull();
    expect(usageRows({ run_id: 'x' })).toBeNull();
  });
});
