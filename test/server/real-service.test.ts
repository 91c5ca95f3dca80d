import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunService } from '../../src/runtime/service/run-service.js';
import { createFeedbackLensPlugin } from '../../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { createEngineBridge } from '../../src/events/engine-bridge.js';
import { formatSseFrame } from '../../src/channels/sse-adapter.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { runCli } from '../../src/cli/run-cli.js';
import { getJson, postJson, readSse } from './helpers.js';

let server: RunningServer | null = null;
let service: RunService | null = null;
let dataDir = '';
afterEach(async () => {
  await server?.close();
  await service?.close();
  server = null;
  service = null;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('server over the real RunService', () => {
  it('runs feedbacklens offline from an upload; the live SSE frames equal a replay of events.jsonl; artifacts are served', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'runtrail-real-'));
    // no skill: this test is about the server, the skill folder is the plugin's
    service = new RunService({ dataDir, agents: [{ ...createFeedbackLensPlugin(), defaultSkill: null }], env: {} });
    server = await startServer({ service, port: 0, dataDir, env: {} });
    const fd = new FormData();
    fd.append('file', new Blob([readFileSync('examples/feedback.csv')]), 'feedback.csv');
    const up = (await (await fetch(`${server.url}/api/uploads`, { method: 'POST', body: fd })).json()) as { path: string };
    const created = await postJson(`${server.url}/api/runs`, { plugin: 'feedbacklens', input: { csv_path: up.path } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = created.body.run_id as string;
    const live = await readSse(`${server.url}/api/runs/${runId}/events`);
    const last = JSON.parse(live.events.at(-1)!.data);
    expect(last.type).toBe('done');
    const status = await getJson(`${server.url}/api/runs/${runId}`);
    expect(status.body.status).toBe('completed');

    // replay, as `runtrail replay --format sse` does it: the bridge over events.jsonl
    const lines = readFileSync(join(dataDir, 'runs', runId, 'runtime', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    // the wire's trace_id is the run's trace id (run_status.json)
    expect(status.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const bridge = createEngineBridge({ traceId: status.body.trace_id });
    let replay = 'retry: 2000\n\n';
    for (const l of lines) {
      const e = bridge.translate(JSON.parse(l) as AgentEvent);
      if (e) replay += formatSseFrame(e, { wireMeta: false });
    }
    expect(live.raw).toBe(replay);
    // and the CLI's own `runtrail replay --format sse` writes the very same frames
    await service.wait(runId);
    let cli = '';
    let err = '';
    const out = { write: (c: string) => ((cli += c), true), isTTY: false, columns: 80 };
    const code = await runCli(['replay', runId, '--format', 'sse', '--data-dir', dataDir], {
      agents: [createFeedbackLensPlugin()],
      stdout: out as never,
      stderr: { write: (c: string) => ((err += c), true), isTTY: false, columns: 80 } as never,
      env: {},
      cwd: process.cwd(),
    });
    expect(code, err).toBe(0);
    expect('retry: 2000\n\n' + cli).toBe(live.raw);

    const docs = status.body.public_documents as Array<{ path: string }>;
    expect(docs.map((d) => d.path)).toContain('artifacts/insight_report.md');
    const md = await fetch(`${server.url}/api/runs/${runId}/artifacts/insight_report.md`);
    expect(md.status).toBe(200);
    expect(await md.text()).toMatch(/^#/m);
    const plan = await getJson(`${server.url}/api/runs/${runId}/plan`);
    expect(plan.body.todo).not.toBeNull();
    const plugins = await getJson(`${server.url}/api/plugins`);
    expect(plugins.body.plugins[0].fileInputs).toEqual(['csv_path']);
  });
});
