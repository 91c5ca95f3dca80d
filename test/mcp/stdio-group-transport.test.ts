import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupStdioTransport, StdoutNoiseError } from '../../src/mcp/stdio-group-transport.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A "server" that prints the given lines on stdout, then waits to be ended. */
async function reading(lines: string[]): Promise<{ messages: JSONRPCMessage[]; errors: Error[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'rt-stdio-'));
  dirs.push(dir);
  const script = join(dir, 'prints.mjs');
  writeFileSync(script, `process.stdout.write(${JSON.stringify(lines.join('\n') + '\n')}); setInterval(() => {}, 1000);`);
  const t = new GroupStdioTransport({ command: process.execPath, args: [script], env: { PATH: process.env.PATH ?? '' }, cwd: dir }, { killGraceMs: 500 });
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  t.onmessage = (m) => void messages.push(m);
  t.onerror = (e) => void errors.push(e);
  await t.start();
  for (let i = 0; i < 100 && messages.length + errors.length < lines.length; i++) await new Promise((r) => setTimeout(r, 20));
  await t.close();
  return { messages, errors };
}

describe('GroupStdioTransport reads JSON-RPC lines', () => {
  it('passes responses, requests and notifications on, and reports what is not a JSON-RPC message', async () => {
    const { messages, errors } = await reading([
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}',
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}',
      '{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad"}}',
      '{"jsonrpc":"2.0","id":2,"result":{},"extra":true}', // the SDK's schemas are strict
      '{"jsonrpc":"1.0","id":3,"result":{}}',
      '{"jsonrpc":"2.0","id":4,"result":[]}',
      'Server started',
    ]);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hi' }] } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
      { jsonrpc: '2.0', id: 'a', error: { code: -32602, message: 'bad' } },
    ]);
    expect(errors).toHaveLength(4);
    expect(errors.every((e) => e instanceof StdoutNoiseError)).toBe(true);
    expect(errors.map((e) => e.message).join('\n')).toContain('"Server started"');
  });
});
