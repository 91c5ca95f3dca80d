import { describe, expect, it } from 'vitest';
import { maskSecretValues, SECRET_MASK } from '../../src/events/secret-values.js';
import { sanitizeProcessPayload, TRUNCATED_MARK } from '../../src/events/process-payload-sanitizer.js';
import { makeProcessEvent } from '../../src/events/process-event-factory.js';
import { processLogLine } from '../../src/events/runtime-process-log.js';
import { redactUrl } from '../../src/server/start-server.js';

// Each line: free text as a command line, a log line or an error message carries it, and the secret in it.
const SECRETS: Array<[string, string]> = [
  ['curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abc123def456" https://api.example.com', 'eyJhbGciOiJIUzI1NiJ9abc123def456'],
  ['auth header was Basic dXNlcjpwYXNzd29yZDEyMw==', 'dXNlcjpwYXNzd29yZDEyMw=='],
  ['OPENAI key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234 rejected', 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234'],
  ['anthropic: sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345-AA', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345-AA'],
  ['git clone https://ghp_1234567890abcdefghijABCDEFGHIJ123456@github.com/o/r', 'ghp_1234567890abcdefghijABCDEFGHIJ123456'],
  ['token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'],
  ['slack says xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx', 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'],
  ['user token xoxp-1111-2222-3333-abcdef', 'xoxp-1111-2222-3333-abcdef'],
  ['aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLE'],
  ['temporary creds ASIAY34FZKBOKMUTVV7A expire soon', 'ASIAY34FZKBOKMUTVV7A'],
  ['psql postgres://app:hunter2-Secret@db.internal:5432/prod', 'hunter2-Secret'],
  ['redis://:s3cr3tpass@127.0.0.1:6379/0', 's3cr3tpass'],
  ['export DB_PASSWORD=correct-horse-battery', 'correct-horse-battery'],
  ['{"api_key": "abcd1234efgh5678"}', 'abcd1234efgh5678'],
  ['client_secret: e1f2a3b4c5d6', 'e1f2a3b4c5d6'],
  ['npm token npm_abcdefghijklmnopqrstuvwxyz0123456789', 'npm_abcdefghijklmnopqrstuvwxyz0123456789'],
  ['key AIzaSyA-1234567890abcdefghijklmnopqrstu in the url', 'AIzaSyA-1234567890abcdefghijklmnopqrstu'],
  ['-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234\n-----END RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEA1234'],
];

// Text that looks a little like a secret but is not one: it must come through unchanged.
const PLAIN = [
  'max_tokens=4096 and token_count: 12',
  'Token validation failed for the request',
  'the secret of a good onboarding is fewer steps',
  'see https://example.com/docs?page=2#install',
  'mail alice@example.com about commit 3550c5c9f1e2d3b4a5968778695a4b3c2d1e0f9a',
  'sync took 1200 ms; bearer of bad news',
  'skipped 3 rows; keyboard shortcuts help',
];

describe('maskSecretValues', () => {
  it.each(SECRETS)('masks the credential in %j', (text, secret) => {
    const out = maskSecretValues(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(SECRET_MASK);
  });

  it.each(PLAIN)('leaves %j unchanged', (text) => {
    expect(maskSecretValues(text)).toBe(text);
  });

  it('keeps the label and the rest of the line', () => {
    expect(maskSecretValues('psql postgres://app:pw12345@db:5432/x ok')).toBe(`psql postgres://app:${SECRET_MASK}@db:5432/x ok`);
    expect(maskSecretValues('Authorization: Bearer abcdef123456')).toBe(`Authorization: Bearer ${SECRET_MASK}`);
  });
});

describe('process events mask credentials inside values', () => {
  it('in strings nested in objects and arrays of the payload', () => {
    const out = sanitizeProcessPayload({
      command: 'deploy --token=tok_live_12345678',
      steps: [['ok', 'login with sk-abcdefghijklmnopqrstuvwx'], { note: 'url https://u:p4ssw0rd@h/x' }],
    });
    const text = JSON.stringify(out);
    for (const s of ['tok_live_12345678', 'sk-abcdefghijklmnopqrstuvwx', 'p4ssw0rd']) expect(text).not.toContain(s);
    expect((out as { steps: unknown[][] }).steps[0][0]).toBe('ok');
  });

  it('in a long string cut by the truncation, also when the credential crosses the cut', () => {
    const secret = 'ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij';
    const long = `${'x'.repeat(1990)} ${secret} ${'y'.repeat(5000)}`;
    const out = sanitizeProcessPayload({ log: long }) as { log: string };
    expect(out.log).toContain(TRUNCATED_MARK);
    expect(out.log.length).toBeLessThan(2100);
    // not even the part before the cut
    expect(out.log).not.toContain('ghp_ABCDEF');
  });

  it("in the event's message and its process-log line", () => {
    const ev = makeProcessEvent({
      operationId: 'op1',
      targetType: 'tool',
      source: 'tool',
      status: 'running',
      message: 'pushing with https://bot:ghp_1234567890abcdefghijABCDEFGHIJ1234@github.com',
    });
    expect(ev.message).not.toContain('ghp_1234567890');
    const line = processLogLine(
      makeProcessEvent({
        operationId: 'op1',
        targetType: 'tool',
        source: 'tool',
        status: 'running',
        payload: { stderr: ['warn: AWS key AKIAIOSFODNN7EXAMPLE is old'] },
      }),
    );
    expect(line).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(line).toContain(SECRET_MASK);
  });
});

describe('request log URLs', () => {
  it('mask credentials anywhere in the URL, not only ?access_token=', () => {
    expect(redactUrl('/api/im/messages?hook=xoxb-123456789012-abcdefghijkl')).toBe(`/api/im/messages?hook=${SECRET_MASK}`);
  });
});
