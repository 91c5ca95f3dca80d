import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeProvider, parseModelSpec, resolveModelProvider, type ModelSpec } from '../../src/providers/resolve-model-provider.js';
import type { OfflineProcedure } from '../../src/providers/model-turn.js';
import type { ModelProvider } from '../../src/providers/model-provider.js';

const offlineProcedure: OfflineProcedure = () => ({ text: 'ok' });
const dir = mkdtempSync(join(tmpdir(), 'runtrail-resolve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = 'sk-resolve-test-key-987654';

function ok(spec: ModelSpec, env: Record<string, string> = {}, extra: object = {}): ModelProvider {
  const r = resolveModelProvider(spec, { offlineProcedure, env, cwd: dir, ...extra });
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.diagnosis)}`);
  return r.provider;
}
function fail(spec: ModelSpec, env: Record<string, string> = {}, extra: object = {}) {
  const r = resolveModelProvider(spec, { offlineProcedure, env, cwd: dir, ...extra });
  if (r.ok) throw new Error('expected a diagnosis');
  return r.diagnosis;
}

describe('resolveModelProvider', () => {
  it('undefined, empty and "offline" give the offline model', () => {
    for (const spec of [undefined, null, '', 'offline', { provider: 'offline' }]) {
      const p = ok(spec);
      expect([p.provider, p.model]).toEqual(['offline', 'reference-v1']);
    }
  });

  it('without a spec, RUNTRAIL_MODEL chooses; an explicit spec wins over it', () => {
    expect(ok(undefined, { RUNTRAIL_MODEL: 'deepseek:deepseek-reasoner', DEEPSEEK_API_KEY: KEY })).toMatchObject({
      provider: 'deepseek',
      model: 'deepseek-reasoner',
    });
    expect(ok('offline', { RUNTRAIL_MODEL: 'deepseek:deepseek-reasoner' }).provider).toBe('offline');
    expect(fail('', { RUNTRAIL_MODEL: 'deepseek:x' }).summary).toContain('DEEPSEEK_API_KEY');
  });

  it('script:<file> loads the script relative to cwd', () => {
    writeFileSync(join(dir, 'turns.json'), JSON.stringify([{ text: 'hello' }]));
    const p = ok('script:turns.json');
    expect([p.provider, p.model]).toEqual(['script', 'turns.json']);
  });

  it('script problems come back as data: no file, missing file, bad turn', () => {
    expect(fail('script:')).toMatchObject({ code: 'invalid_request', summary: 'script needs a file: script:<file.json>' });
    expect(fail('script:absent.json').summary).toContain('absent.json (ENOENT)');
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ toolCalls: [{ args: {} }] }]));
    expect(fail('script:bad.json').summary).toMatch(/turn 0: toolCalls\.0\.name/);
  });

  it('openai:, anthropic:, deepseek: with their keys from the env', () => {
    expect(ok('openai:gpt-4o-mini', { OPENAI_API_KEY: KEY })).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(ok('anthropic:claude-haiku-4-5', { ANTHROPIC_API_KEY: KEY })).toMatchObject({ provider: 'anthropic', model: 'claude-haiku-4-5' });
    expect(ok('deepseek:deepseek-chat', { DEEPSEEK_API_KEY: KEY })).toMatchObject({ provider: 'deepseek', model: 'deepseek-chat' });
  });

  it('the object form { provider } uses the default model, or <PROVIDER>_MODEL', () => {
    expect(ok({ provider: 'deepseek' }, { DEEPSEEK_API_KEY: KEY }).model).toBe('deepseek-chat');
    expect(ok({ provider: 'openai' }, { OPENAI_API_KEY: KEY, OPENAI_MODEL: 'gpt-4.1-mini' }).model).toBe('gpt-4.1-mini');
    expect(ok({ provider: 'OpenAI', model: 'gpt-4o' }, { OPENAI_API_KEY: KEY }).model).toBe('gpt-4o');
  });

  it('a missing key is an incompatible diagnosis naming the env var', () => {
    for (const [spec, envVar] of [
      ['openai:gpt-4o-mini', 'OPENAI_API_KEY'],
      ['anthropic:claude-haiku-4-5', 'ANTHROPIC_API_KEY'],
      ['deepseek:deepseek-chat', 'DEEPSEEK_API_KEY'],
    ] as const) {
      const d = fail(spec, { OPENAI_API_KEY: '  ' });
      expect(d.code).toBe('incompatible');
      expect(d.summary).toContain(envVar);
      expect(d.hint).toContain(envVar);
    }
  });

  it('openai-compatible needs a base URL (env or object) and a model; the key is optional', () => {
    expect(fail('openai-compatible:qwen2.5')).toMatchObject({ code: 'incompatible', summary: expect.stringContaining('OPENAI_COMPATIBLE_BASE_URL') });
    expect(fail('openai-compatible', { OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:8000/v1' })).toMatchObject({
      code: 'incompatible',
      summary: expect.stringContaining('model name'),
    });
    const p = ok('openai-compatible:qwen2.5', { OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:8000/v1' });
    expect(describeProvider(p)).toEqual({ provider: 'openai-compatible', model: 'qwen2.5', base_url_host: '127.0.0.1:8000' });
    const viaObject = ok({ provider: 'openai-compatible', model: 'm', baseURL: 'http://10.0.0.5:8080/v1' });
    expect(describeProvider(viaObject).base_url_host).toBe('10.0.0.5:8080');
  });

  it('a server can refuse script models', () => {
    writeFileSync(join(dir, 'turns.json'), JSON.stringify([{ text: 'hello' }]));
    expect(fail('script:turns.json', {}, { allowScript: false })).toMatchObject({ code: 'invalid_request', summary: 'The script model is not allowed here' });
  });

  it('a server can refuse a caller-chosen base URL', () => {
    const d = fail({ provider: 'openai-compatible', model: 'm', baseURL: 'http://evil.example/v1' }, {}, { allowSpecBaseURL: false });
    expect(d.code).toBe('incompatible');
  });

  it('ollama:<model> is an OpenAI-compatible alias on 127.0.0.1:11434 by default and keeps tags with colons', () => {
    const p = ok('ollama:llama3.1:8b');
    expect(describeProvider(p)).toEqual({ provider: 'ollama', model: 'llama3.1:8b', base_url_host: '127.0.0.1:11434' });
    expect(describeProvider(ok('ollama:qwen2.5', { OLLAMA_BASE_URL: 'http://gpu-box:11434/v1' })).base_url_host).toBe('gpu-box:11434');
  });

  it('an unknown provider lists the valid ones', () => {
    const d = fail('gemini:pro');
    expect(d.code).toBe('invalid_request');
    expect(d.summary).toBe('Unknown model provider "gemini"; valid providers: offline, script, openai, anthropic, deepseek, openai-compatible, ollama');
    expect(fail('toString:x').code).toBe('invalid_request');
  });

  it('bad spec shapes name the field', () => {
    expect(fail(42 as unknown as ModelSpec).summary).toContain('got number');
    expect(fail({ provider: '' }).summary).toBe('model.provider must be a non-empty string');
    expect(fail({ provider: 'openai', model: 5 } as unknown as ModelSpec).summary).toBe('model.model must be a string');
    expect(fail({ provider: 'openai', apiKey: 'x' } as unknown as ModelSpec).summary).toContain('unknown field(s): apiKey');
  });

  it('an invalid base URL is rejected naming the variable', () => {
    const d = fail('openai:gpt-4o-mini', { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: 'ftp://files' });
    expect(d.summary).toContain('must use http or https');
    expect(d.hint).toContain('OPENAI_BASE_URL');
    expect(fail('openai:gpt-4o-mini', { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: 'not a url' }).summary).toContain('is not a URL');
  });
});

describe('describeProvider', () => {
  it('gives provider, model and the endpoint host, never the key', () => {
    const p = ok('openai:gpt-4o-mini', { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: 'https://gateway.example.com/openai/v1' });
    const d = describeProvider(p);
    expect(d).toEqual({ provider: 'openai', model: 'gpt-4o-mini', base_url_host: 'gateway.example.com' });
    expect(JSON.stringify(d)).not.toContain(KEY);
    expect(JSON.stringify(p)).not.toContain(KEY);
    expect(describeProvider(ok('offline'))).toEqual({ provider: 'offline', model: 'reference-v1', base_url_host: null });
  });

  it('defaults to the public endpoints', () => {
    expect(describeProvider(ok('anthropic:claude-haiku-4-5', { ANTHROPIC_API_KEY: KEY })).base_url_host).toBe('api.anthropic.com');
    expect(describeProvider(ok('deepseek:deepseek-chat', { DEEPSEEK_API_KEY: KEY })).base_url_host).toBe('api.deepseek.com');
  });
});

describe('parseModelSpec', () => {
  it('splits at the first colon only', () => {
    expect(parseModelSpec('ollama:llama3.1:8b')).toEqual({ provider: 'ollama', model: 'llama3.1:8b' });
    expect(parseModelSpec(' OpenAI : gpt-4o ')).toEqual({ provider: 'openai', model: 'gpt-4o' });
  });
});
