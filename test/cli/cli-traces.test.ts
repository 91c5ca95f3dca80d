/**
 * Traces from the built `runtrail` binary (dist/src/cli/main.js) as a user runs it: spans reach a real
 * OTLP/HTTP receiver before the process exits; without an endpoint no OpenTelemetry SDK is loaded.
 * `npm test` builds before vitest; without dist/ these tests are skipped with a message.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { startOtlpReceiver, type OtlpReceiver } from '../telemetry/otlp-receiver.js';

const ROOT = runtrailPackageRoot();
const MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const BUILT = existsSync(MAIN);
if (!BUILT) console.warn(`cli-traces.test.ts skipped: ${MAIN} is missing — run \`npx tsc -p tsconfig.build.json\` first`);

let dir = '';
let receiver: OtlpReceiver;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-cli-traces-'));
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The environment of a user's shell, without this machine's Runtrail or OpenTelemetry settings. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_') && !k.startsWith('OTEL_') && k !== 'TRACEPARENT') e[k] = v;
  return { ...e, HOME: dir, NO_COLOR: '1', ...extra };
}

function run(args: string[], extra: Record<string, string>, script?: string): Promise<{ code: number | null; out: string; err: string }> {
  const argv = script ? ['--input-type=module', '-e', script] : [MAIN, ...args];
  const child = spawn(process.execPath, argv, { cwd: dir, env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

const CHAT = ['run', 'chat', '--goal', 'hello', '--model', 'offline', '--json'];

describe.skipIf(!BUILT)('runtrail run with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it("delivers the run's spans before it exits; the frames' trace_id is the trace", { timeout: 60_000 }, async () => {
    const r = await run([...CHAT, '--data-dir', join(dir, 'data')], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'runtrail-cli-test' });
    expect(r.code, r.err).toBe(0);
    // the process has exited: what the receiver holds was sent before it did
    const root = receiver.spans.find((s) => s.name === 'runtrail.run');
    expect(root).toBeDefined();
    expect(root!.attributes).toMatchObject({ 'runtrail.plugin': 'chat', 'runtrail.claw': 'cli' });
    expect(root!.resource['service.name']).toBe('runtrail-cli-test');
    const chat = receiver.spans.find((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(chat).toMatchObject({ name: 'chat reference-v1', parentSpanId: root!.spanId, traceId: root!.traceId });
    const frames = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { trace_id?: string });
    expect(new Set(frames.map((f) => f.trace_id))).toEqual(new Set([root!.traceId]));
    const runId = root!.attributes['runtrail.run_id'] as string;
    const status = JSON.parse(readFileSync(join(dir, 'data', 'runs', runId, 'runtime', 'run_status.json'), 'utf8')) as { trace_id: string };
    expect(status.trace_id).toBe(root!.traceId);
  });

  it("TRACEPARENT makes the run a child of the caller's span", { timeout: 60_000 }, async () => {
    const r = await run([...CHAT, '--data-dir', join(dir, 'data')], {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      TRACEPARENT: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    expect(r.code, r.err).toBe(0);
    expect(receiver.spans.find((s) => s.name === 'runtrail.run')).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      parentSpanId: 'b7ad6b7169203331',
    });
  });

  it('a bad endpoint is a usage error naming the variable, before any run', { timeout: 60_000 }, async () => {
    const r = await run([...CHAT, '--data-dir', join(dir, 'data')], { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' });
    expect(r.code).toBe(2);
    expect(r.err).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(existsSync(join(dir, 'data', 'runs'))).toBe(false);
  });

  it('without an endpoint no OpenTelemetry SDK or exporter is loaded', { timeout: 60_000 }, async () => {
    // the CLI in-process of a child: which @opentelemetry packages did the run load? (`ai` itself loads the API)
    const probe = (endpoint: string) => `
      import { createRequire } from 'node:module';
      const { runCli } = await import(${JSON.stringify(join(ROOT, 'dist/src/cli/run-cli.js'))});
      const { cliPlugins } = await import(${JSON.stringify(join(ROOT, 'dist/src/cli/cli-plugins.js'))});
      const { defaultSkillsDir } = await import(${JSON.stringify(join(ROOT, 'dist/src/runtime/package-root.js'))});
      const quiet = { write: () => true };
      const code = await runCli(${JSON.stringify([...CHAT, '--data-dir', join(dir, 'data')])}, { agents: await cliPlugins(defaultSkillsDir(), {}), stdout: quiet, stderr: quiet, env: { HOME: ${JSON.stringify(dir)}${endpoint ? `, OTEL_EXPORTER_OTLP_ENDPOINT: ${JSON.stringify(endpoint)}` : ''} }, cwd: ${JSON.stringify(dir)} });
      const pkgs = Object.keys(createRequire(import.meta.url).cache).flatMap((k) => (k.match(/node_modules\\/(@opentelemetry\\/[^/]+)/) ?? []).slice(1));
      console.log(JSON.stringify({ code, pkgs: [...new Set(pkgs)] }));`;
    const off = JSON.parse((await run([], {}, probe(''))).out) as { code: number; pkgs: string[] };
    expect(off.code).toBe(0);
    expect(off.pkgs.filter((p) => p !== '@opentelemetry/api')).toEqual([]);
    // the same probe sees them when an endpoint is set: the check can fail
    const on = JSON.parse((await run([], {}, probe(receiver.url))).out) as { code: number; pkgs: string[] };
    expect(on.pkgs).toEqual(expect.arrayContaining(['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http']));
  });
});
