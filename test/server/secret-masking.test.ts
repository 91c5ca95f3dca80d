/**
 * A secret of the server (an environment variable named like a key) reaches a run every way it can —
 * in the goal, in a file a tool reads, in what the model answers, base64- and URL-encoded — and shows
 * nowhere: not in any file of the data dir, not in the SSE or WebSocket frames, the API's or a chat's answers or what the model
 * was sent. A credential on a tool call's command line (a token, a bare AWS secret access key) is masked
 * in its start event. Everything the run wrote is its owner's alone, though the process started with umask 000.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunService } from '../../src/runtime/service/run-service.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import type { AnyToolDefinition } from '../../src/tools/tool.js';
import { notesPlugin } from '../runtime/fixtures/fake-plugin.js';
import { FakeProvider } from '../runtime/fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from '../runtime/fixtures/setup.js';
import WebSocket from 'ws';
import { getJson, postJson, readSse } from './helpers.js';

const SECRET = `e2e-Secret/${Math.random().toString(16).slice(2, 10)}+tail`;
const FORMS = {
  exact: SECRET,
  base64: Buffer.from(SECRET).toString('base64'),
  base64url: Buffer.from(SECRET).toString('base64url'),
  url: encodeURIComponent(SECRET),
  basic: Buffer.from(`user:${SECRET}`).toString('base64').slice(8, 30),
};
const GITHUB_TOKEN = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
const AWS_SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

/** Which forms of the secret (and, unless `serverSecretsOnly`, the credential of the tool call) `text` shows. */
function leaks(text: string, serverSecretsOnly = false): string[] {
  const found = Object.entries(FORMS)
    .filter(([, f]) => text.includes(f))
    .map(([k]) => k);
  if (!serverSecretsOnly && text.includes(GITHUB_TOKEN)) found.push('github token');
  if (!serverSecretsOnly && text.includes(AWS_SECRET_KEY)) found.push('aws secret access key');
  return found;
}

function walk(dir: string): Array<{ path: string; dir: boolean }> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? [{ path: p, dir: true }, ...walk(p)] : [{ path: p, dir: false }];
  });
}

let env: TestEnv;
let svc: RunService | null = null;
let server: RunningServer | null = null;
let umaskBefore = 0;
beforeEach(() => {
  env = makeEnv();
  umaskBefore = process.umask(0);
});
afterEach(async () => {
  await server?.close();
  await svc?.close();
  server = null;
  svc = null;
  process.umask(umaskBefore);
  env.cleanup();
});

describe('the server secrets never leave a run', () => {
  it('not in files, frames, answers or model requests, in any encoding; files owner-only', async () => {
    // a data dir made earlier, open to everyone
    mkdirSync(join(env.dataDir, 'runs'), { recursive: true, mode: 0o777 });
    writeFileSync(env.notesPath, `one\ntwo key=${SECRET}\nthree\n`);
    const shell: AnyToolDefinition = {
      name: 'run_command',
      description: 'Pretends to run a command.',
      parameters: z.object({ command: z.string() }),
      async execute(args: { command: string }) {
        return { ok: true, content: `ran: ${args.command}` };
      },
    };
    const provider = new FakeProvider([
      {
        text: 'Reading.',
        toolCalls: [
          { name: 'read_notes', args: {} },
          { name: 'run_command', args: { command: `curl -H "Authorization: Bearer ${GITHUB_TOKEN}" https://api.github.com/user` } },
          { name: 'run_command', args: { command: `aws configure set aws_secret_access_key ${AWS_SECRET_KEY}` } },
        ],
      },
      {
        toolCalls: [
          { name: 'write_json', args: { path: 'count.json', value: { count: 3, title: 'n' } } },
          {
            name: 'write_md',
            args: {
              path: 'report.md',
              text: `# Report\n\n## Summary\n\nThree lines; ${FORMS.base64} and ?k=${FORMS.url} and Basic ${Buffer.from(`user:${SECRET}`).toString('base64')}\n`,
            },
          },
        ],
      },
      { text: `Done: 3 notes. The key was ${SECRET} (${FORMS.base64url}).` },
    ]);
    svc = makeService(env, provider, { env: { RUNTRAIL_E2E_API_KEY: SECRET }, agents: [notesPlugin([shell])] });
    server = await startServer({ service: svc, port: 0, dataDir: env.dataDir, env: {}, inputRoots: 'any' });

    const created = await fetch(`${server.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'notes', goal: `Count the notes; the key is ${SECRET}`, input: { notes_path: env.notesPath } }),
    });
    expect(created.status).toBe(201);
    const { run_id: runId } = (await created.json()) as { run_id: string };
    const sse = await readSse(`${server.url}/api/runs/${runId}/events`);
    const done = await svc.wait(runId);
    expect(done.status).toBe('completed');

    // the run did receive and produce the secret: the masks stand where it was
    expect(sse.raw).toContain('[redacted]');
    expect(leaks(sse.raw)).toEqual([]);
    const answers = [
      await getJson(`${server.url}/api/runs/${runId}`),
      await getJson(`${server.url}/api/runs`),
      await getJson(`${server.url}/api/runs/${runId}/manifest`),
      await getJson(`${server.url}/api/runs/${runId}/artifacts/report.md`),
    ];
    for (const a of answers) expect(leaks(JSON.stringify(a.body))).toEqual([]);
    // the same frames over a WebSocket, and a chat's reply naming the run's goal
    const wsFrames = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(`${server!.url.replace('http', 'ws')}/api/runs/${runId}/ws?after=0`);
      let text = '';
      ws.on('message', (m) => (text += `${String(m)}\n`));
      ws.on('close', () => resolve(text));
      ws.on('error', reject);
    });
    expect(wsFrames).toContain('[redacted]');
    expect(leaks(wsFrames)).toEqual([]);
    const im = await postJson(`${server.url}/api/im/messages`, { conversation_id: runId, text: '/runs' });
    expect(im.body.messages.join('\n')).toContain('the key is [redacted]');
    expect(leaks(JSON.stringify(im.body))).toEqual([]);
    expect(String(answers[0].body.final_answer)).toContain('The key was [redacted] ([redacted]).');
    // the model is sent no server secret (the credential it wrote into its own tool call is its conversation)
    expect(leaks(JSON.stringify(provider.requests), true)).toEqual([]);
    expect(JSON.stringify(provider.requests)).toContain('two key=[redacted]');

    const files = walk(env.dataDir);
    expect(files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/events\.jsonl$/),
        expect.stringMatching(/trace\.jsonl$/),
        expect.stringMatching(/request\.json$/),
        expect.stringMatching(/system_prompt\.md$/),
      ]),
    );
    // the run's own copy of its input file is the user's data as given; everything Runtrail wrote is masked,
    // but for the checkpoint: it is the conversation a resumed run goes on with, as the model was sent it
    // (the credential the model wrote into its own call included), so only the server's secrets are masked there
    for (const f of files.filter((x) => !x.dir && !x.path.endsWith(join('input', 'notes.txt')))) {
      expect(leaks(readFileSync(f.path, 'utf8'), f.path.endsWith(join('runtime', 'checkpoint.jsonl'))), f.path).toEqual([]);
    }
    const events = readFileSync(join(env.dataDir, 'runs', runId, 'runtime', 'events.jsonl'), 'utf8');
    expect(events).toContain('Authorization: Bearer [redacted]');
    expect(events).toContain('aws configure set aws_secret_access_key [redacted]');

    for (const f of [{ path: env.dataDir, dir: true }, ...files]) {
      const mode = statSync(f.path).mode & 0o777;
      expect(mode.toString(8), f.path).toBe(f.dir ? '700' : '600');
    }
  });
});
