/**
 * Every route that takes a body, read from the server's own route table, attacked with bodies nested
 * thousands of levels deep and bodies as wide as the size limit allows: a depth bomb is a 400 naming
 * where it goes too deep, a wide one is answered (or refused) without a 500, and the server answers on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INPUT_DEPTH } from '../../src/runtime/input-depth.js';
import { removeDir, startStack, type Stack } from '../triggers/helpers.js';

let stack: Stack;
let runId = '';
let scheduleId = '';

beforeAll(async () => {
  stack = await startStack();
  const run = await post('/api/runs', JSON.stringify({ plugin: 'talk', input: { topic: 'x' } }));
  expect(run.status, run.text).toBe(201);
  runId = (JSON.parse(run.text) as { run_id: string }).run_id;
  const schedule = await post('/api/schedules', JSON.stringify({ agent: 'talk', every: '1h', input: { topic: 'x' } }));
  expect(schedule.status, schedule.text).toBe(201);
  scheduleId = (JSON.parse(schedule.text) as { schedule_id: string }).schedule_id;
});
afterAll(async () => {
  await stack.stop();
  removeDir(stack.dataDir);
});

async function send(method: string, path: string, body: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${stack.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body });
  return { status: r.status, text: await r.text() };
}
const post = (path: string, body: string) => send('POST', path, body);

/**
 * The routes that read a body (POST, PUT, PATCH, DELETE), from Fastify's printed route tree: each line
 * is a path segment under the line it is indented beneath.
 */
function bodyRoutes(): Array<{ method: string; path: string }> {
  const tree = stack.server!.app.printRoutes({ commonPrefix: false });
  const stackOfPaths: string[] = [];
  const out: Array<{ method: string; path: string }> = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ├└─]*?)(?:[├└]── )(.+?) \(([^)]+)\)$/.exec(line);
    if (!m) continue;
    const level = m[1].length / 4;
    const path = (stackOfPaths[level - 1] ?? '') + m[2];
    stackOfPaths[level] = path;
    stackOfPaths.length = level + 1;
    for (const method of m[3].split(', ')) if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) out.push({ method, path });
  }
  return out;
}

/** A route's path with real ids where it names them, so the body reaches the handler's own checks. */
function concrete(path: string): string {
  return path
    .replace(/^\/api\/schedules\/:id/, `/api/schedules/${scheduleId}`)
    .replace(/:id/g, runId)
    .replace(/:approval/g, 'approval_1')
    .replace(/\*$/, 'x');
}

function nested(levels: number, open: string, close: string, inner = '1'): string {
  return open.repeat(levels) + inner + close.repeat(levels);
}

const DEPTH_BOMBS: Record<string, string> = {
  'objects 5,000 deep': nested(5000, '{"a":', '}'),
  'arrays 100,000 deep': nested(100_000, '[', ']'),
  'input 5,000 deep': `{"plugin":"talk","agent":"talk","every":"1h","input":${nested(5000, '{"topic":', '}', '"x"')}}`,
  'mixed 3,000 deep under a known field': `{"messages":[{"role":"user","parts":${nested(3000, '[{"a":', '}]')}}]}`,
  [`just past the limit (${MAX_INPUT_DEPTH + 1})`]: nested(MAX_INPUT_DEPTH + 1, '{"k":', '}'),
};

const WIDE_BOMBS: Record<string, string> = {
  '200,000 zeros': `[${new Array(200_000).fill('0').join(',')}]`,
  'input with 80,000 keys': `{"plugin":"talk","agent":"talk","every":"1h","text":"hi","input":{${Array.from({ length: 80_000 }, (_, i) => `"k${i}":0`).join(',')}}}`,
  'a 900 KB string': JSON.stringify({ plugin: 'talk', agent: 'talk', text: 'x'.repeat(900_000), input: { topic: 'y'.repeat(10) } }),
  '60,000 empty objects': `{"input":[${new Array(60_000).fill('{}').join(',')}]}`,
};

describe('JSON bodies on every route', () => {
  it('reads the body routes from the route table', () => {
    const routes = bodyRoutes().map((r) => `${r.method} ${r.path}`);
    for (const r of [
      'POST /api/runs',
      'POST /api/schedules',
      'PATCH /api/schedules/:id',
      'POST /api/chat',
      'POST /api/im/messages',
      'POST /api/runs/:id/messages',
    ])
      expect(routes).toContain(r);
    expect(routes.length).toBeGreaterThanOrEqual(10);
  });

  it('refuses a depth bomb on each with a 400 naming where it is too deep', async () => {
    for (const { method, path } of bodyRoutes()) {
      for (const [name, body] of Object.entries(DEPTH_BOMBS)) {
        const r = await send(method, concrete(path), body);
        expect(r.status, `${method} ${path}: ${name}: ${r.text.slice(0, 200)}`).toBe(400);
        const error = (JSON.parse(r.text) as { error: { code: string; message: string; details: { issues: Array<{ path: string }> } } }).error;
        expect(error.code).toBe('invalid_request');
        expect(error.message, name).toMatch(new RegExp(`nested more than ${MAX_INPUT_DEPTH} levels deep`));
        expect(error.details.issues[0].path.length).toBeGreaterThan(0);
      }
    }
    // where: the path of keys down to the level past the limit
    const r = await post('/api/schedules', DEPTH_BOMBS['input 5,000 deep']);
    expect(JSON.parse(r.text).error.details.issues[0].path).toMatch(/^input\.topic\.topic\..*\.topic$/);
  });

  it('answers a wide bomb on each without a 500, and a body over the size limit with a 413', async () => {
    for (const { method, path } of bodyRoutes()) {
      for (const [name, body] of Object.entries(WIDE_BOMBS)) {
        const r = await send(method, concrete(path), body);
        expect(r.status, `${method} ${path}: ${name}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
      }
      const over = await send(method, concrete(path), JSON.stringify({ text: 'x'.repeat(1_100_000) }));
      expect(over.status, `${method} ${path}: over the limit`).toBe(413);
    }
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
  });

  it('still takes a body at the limit of nesting', async () => {
    const r = await post(
      '/api/schedules',
      JSON.stringify({ agent: 'talk', every: '1h', input: { topic: 'x' }, note: JSON.parse(nested(MAX_INPUT_DEPTH - 1, '{"k":', '}')) }),
    );
    expect(r.text).not.toMatch(/nested more than/);
  });
});
