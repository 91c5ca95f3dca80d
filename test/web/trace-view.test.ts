import { describe, expect, it } from 'vitest';
import { metricsFigures } from '../../web/src/metrics-figures.js';
import { axisTicks, barSummary, formatMs, placeBars, tokensText, type RunTraceView, type TraceBar } from '../../web/src/trace-view.js';

const bar = (over: Partial<TraceBar>): TraceBar => ({
  id: 'x',
  parent_id: 'run',
  kind: 'tool',
  name: 'execute_tool x',
  label: 'x',
  start_ms: 0,
  end_ms: 10,
  duration_ms: 10,
  status: 'ok',
  error: null,
  tokens: null,
  cost_usd: null,
  step_index: 0,
  ...over,
});

describe('the waterfall geometry', () => {
  it("places finished bars on the run's length and open bars up to now", () => {
    const view: RunTraceView = {
      run_id: 'r',
      trace_id: 't',
      t0: 0,
      last_ms: 500,
      ended: false,
      bars: [
        bar({ id: 'run', kind: 'run', parent_id: null, end_ms: null, duration_ms: null }),
        bar({ id: 'a', start_ms: 100, end_ms: 300 }),
        bar({ id: 'b', start_ms: 400, end_ms: null }),
      ],
    };
    const live = placeBars(view, 1000);
    expect(live.totalMs).toBe(1000);
    expect(live.bars.map((p) => [p.bar.id, p.left, p.width, p.running, p.ms])).toEqual([
      ['run', 0, 100, true, 1000],
      ['a', 10, 20, false, 200],
      ['b', 40, 60, true, 600],
    ]);
    // an ended run is as long as its last event, whatever the page's clock says
    const done = placeBars({ ...view, ended: true, bars: [bar({ id: 'a', start_ms: 0, end_ms: 250 })] }, 99_999);
    expect(done.totalMs).toBe(500);
    expect(done.bars[0].width).toBe(50);
    // a call too short to see still gets a sliver
    expect(placeBars({ ...view, ended: true, bars: [bar({ start_ms: 499, end_ms: 499 })] }, 0).bars[0].width).toBeGreaterThan(0);
  });

  it('says durations, ticks and tokens as people read them', () => {
    expect([0.4, 12.6, 999, 1234, 15_200, 125_000].map(formatMs)).toEqual(['<1 ms', '13 ms', '999 ms', '1.23 s', '15.2 s', '2 min 05 s']);
    expect(axisTicks(4420)).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(axisTicks(1060)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(axisTicks(0)).toEqual([0]);
    expect(tokensText({ input: 1234, output: 56, cached_input: 1000, cache_write: 0, reasoning: 7 })).toBe('1,234 in · 56 out · 1,000 cached · 7 reasoning');
    expect(tokensText(null)).toBe('');
    const p = placeBars(
      {
        run_id: 'r',
        trace_id: 't',
        t0: 0,
        last_ms: 100,
        ended: true,
        bars: [bar({ kind: 'mcp', label: 'files · read_file', status: 'error', error: 'denied', end_ms: 40 })],
      },
      0,
    ).bars[0];
    expect(barSummary(p)).toBe('MCP, files · read_file, 40 ms, failed: denied');
  });
});

describe('the metrics panel figures', () => {
  const metrics = {
    run_id: 'r',
    status: 'completed',
    duration_ms: 4410.2,
    stage_durations_ms: { queued: 8, created: 24, planning: 14, model_thinking: 2560, tool_executing: 1800, validating: 2 },
    iterations: 4,
    tool_calls: { total: 3, failed: 1, by_name: { lookup: 1, flaky: 1, read: 1 } },
    tool_duration_ms: { lookup: 902, flaky: 0.4, read: 901 },
    tokens: { input: 926, output: 36, cached_input: 0, cache_write: 0, reasoning: 0 },
    cost_usd: null,
    model_latency_ms: { turns: 4, total: 2250, mean: 562, max: 844, first_token_mean: 531 },
    provider_retries: 1,
    events: 40,
  };

  it('reads the headline, time by stage in run order with shares, tool calls by count and time, and latency', () => {
    const f = metricsFigures(metrics)!;
    expect(Object.fromEntries(f.headline.map((h) => [h.label, h.value]))).toEqual({
      Duration: '4.41 s',
      'Model calls': '4',
      'Tool calls': '3 (1 failed)',
      Retries: '1 model retry',
      Cost: 'unknown',
    });
    expect(f.stages.map((s) => [s.label, Math.round(s.pct)])).toEqual([
      ['Queued', 0],
      ['Setting up', 1],
      ['Planning', 0],
      ['Model', 58],
      ['Tools', 41],
      ['Validating', 0],
    ]);
    expect(f.tools).toEqual([
      { name: 'lookup', calls: 1, ms: 902 },
      { name: 'read', calls: 1, ms: 901 },
      { name: 'flaky', calls: 1, ms: 0.4 },
    ]);
    expect(f.latency.map((l) => l.value)).toEqual(['562 ms', '844 ms', '531 ms', '2.25 s']);
  });

  it('a run without retries or model calls says so, a stage it does not know keeps its name, and a non-metrics value shows nothing', () => {
    const f = metricsFigures({
      ...metrics,
      provider_retries: 0,
      tool_calls: { total: 0, failed: 0, by_name: {} },
      model_latency_ms: { turns: 0 },
      stage_durations_ms: { paused_by_user: 5 },
    })!;
    expect(f.headline.find((h) => h.label === 'Retries')!.value).toBe('none');
    expect(f.headline.find((h) => h.label === 'Tool calls')!.value).toBe('0');
    expect(f.latency).toEqual([]);
    expect(f.stages.map((s) => s.label)).toEqual(['paused by user']);
    expect(metricsFigures(null)).toBeNull();
    expect(metricsFigures({ tokens: {} })).toBeNull();
  });
});
