import { describe, expect, it } from 'vitest';
import { isSecretEnvName, registerEnvSecrets, SECRET_MASK, SecretMasker, secretsOfEnv } from '../../src/events/secret-masker.js';
import { maskSecretValues } from '../../src/events/secret-values.js';

const SECRET = 'rt-9f8e7d6c5b4a39281706f5e4d3c2b1a0';

function masker(...values: string[]): SecretMasker {
  const m = new SecretMasker();
  for (const v of values) m.register(v, 'TEST');
  return m;
}

describe('SecretMasker', () => {
  it('masks the exact value wherever it stands', () => {
    const m = masker(SECRET);
    expect(m.mask(`token=${SECRET}; again ${SECRET}.`)).toBe(`token=${SECRET_MASK}; again ${SECRET_MASK}.`);
  });

  it('masks its base64 and base64url forms, alone and inside a longer encoded text at every alignment', () => {
    const m = masker(SECRET);
    for (const prefix of ['', 'u:', 'ab:', 'abc:', 'user:']) {
      for (const suffix of ['', 'x', 'xy', ':tail']) {
        const b64 = Buffer.from(`${prefix}${SECRET}${suffix}`).toString('base64');
        const out = m.mask(`Authorization: Basic ${b64}`);
        expect(out, `${prefix}|${suffix}`).toContain(SECRET_MASK);
        // what is left of the encoded text cannot be decoded back to the secret
        expect(Buffer.from(out.replace('Authorization: Basic ', '').replace(SECRET_MASK, ''), 'base64').toString()).not.toContain(SECRET.slice(4, 20));
        const url = Buffer.from(`${prefix}${SECRET}${suffix}`).toString('base64url');
        expect(m.mask(`?state=${url}`)).toContain(SECRET_MASK);
      }
    }
  });

  it('masks the URL-encoded and JSON-escaped forms of a value with special characters', () => {
    const odd = 'p@ss w/rd+"quoted"&more';
    const m = masker(odd);
    expect(m.mask(`?pw=${encodeURIComponent(odd)}&x=1`)).toBe(`?pw=${SECRET_MASK}&x=1`);
    expect(m.mask(`?pw=${encodeURIComponent(odd).replace(/%20/g, '+')}`)).toBe(`?pw=${SECRET_MASK}`);
    expect(m.mask(`?pw=${encodeURIComponent(odd).replace(/%[0-9A-F]{2}/g, (x) => x.toLowerCase())}`)).toBe(`?pw=${SECRET_MASK}`);
    expect(m.mask(JSON.stringify({ pw: odd }))).toBe(`{"pw":"${SECRET_MASK}"}`);
  });

  it('refuses values too short to mask and leaves text without secrets as it is (the same string)', () => {
    const m = new SecretMasker();
    expect(m.register('1234')).toBe(false);
    expect(m.register(undefined)).toBe(false);
    expect(m.size).toBe(0);
    m.register(SECRET);
    const text = 'nothing secret here, just words and 1234';
    expect(m.mask(text)).toBe(text);
  });

  it('masks every string of a nested value, copies only what changed, and survives cycles and odd objects', () => {
    const m = masker(SECRET);
    const untouched = { a: ['x', { b: 'y' }] };
    const v: Record<string, unknown> = { cmd: `echo ${SECRET}`, nested: [{ deep: { deeper: [SECRET] } }], untouched, n: 1, d: new Date(0) };
    v.self = v;
    const out = m.maskDeep(v) as typeof v;
    expect(out).not.toBe(v);
    expect(JSON.stringify({ ...out, self: null })).not.toContain(SECRET);
    expect(out.untouched).toBe(untouched);
    expect(out.d).toBe(v.d);
    expect(v.cmd).toBe(`echo ${SECRET}`); // the caller's value is never modified
    const same = { a: 'plain', b: [1, 2] };
    expect(m.maskDeep(same)).toBe(same);
  });

  it('masks a value nested deeper than it walks by replacing it', () => {
    const m = masker(SECRET);
    let deep: unknown = SECRET;
    for (let i = 0; i < 1_500; i++) deep = { a: deep };
    expect(JSON.stringify(m.maskDeep(deep))).not.toContain(SECRET);
  });
});

describe('the server environment', () => {
  it('takes variables named like secrets, and passwords inside URLs', () => {
    const env = {
      OPENAI_API_KEY: 'sk-live-0123456789abcdef',
      RUNTRAIL_API_TOKEN: 'a'.repeat(32),
      DB_PASSWORD: 'correct horse battery',
      GITHUB_TOKEN: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
      DATABASE_URL: 'postgres://app:pg-pass-1234@db:5432/x',
      PWD: '/home/me/some/secret/folder',
      OLDPWD: '/tmp/token-folder',
      HOME: '/root',
      TOKENIZERS_PARALLELISM: 'false',
      MAX_TOKENS: '4096',
      SSH_AUTH_SOCK: '/tmp/ssh-abc/agent.1',
      GOOGLE_APPLICATION_CREDENTIALS_FILE: '/etc/gcp/key.json',
      OAUTH_TOKEN_URL: 'https://auth.example.com/token',
      SHORT_TOKEN: 'abc',
    };
    expect(
      secretsOfEnv(env)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['DATABASE_URL (password)', 'DB_PASSWORD', 'GITHUB_TOKEN', 'OPENAI_API_KEY', 'RUNTRAIL_API_TOKEN']);
    const m = new SecretMasker();
    registerEnvSecrets(env, m);
    expect(m.mask('pw pg-pass-1234 and sk-live-0123456789abcdef')).toBe(`pw ${SECRET_MASK} and ${SECRET_MASK}`);
    expect(m.labels()).toContain('OPENAI_API_KEY');
  });

  it.each([
    ['OPENAI_API_KEY', true],
    ['ANTHROPIC_API_KEY', true],
    ['AWS_SECRET_ACCESS_KEY', true],
    ['SLACK_BOT_TOKEN', true],
    ['WEBHOOK_SECRET', true],
    ['db_pass', true],
    ['apiKey', true],
    ['PWD', false],
    ['PATH', false],
    ['KEY_FILE', false],
    ['AWS_ACCESS_KEY_ID', false],
    ['KEYTIMEOUT', false],
  ])('%s names a secret: %s', (name, yes) => {
    expect(isSecretEnvName(name)).toBe(yes);
  });
});

describe('AWS secret access keys', () => {
  const id = 'AKIAIOSFODNN7EXAMPLE';
  const key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
  it.each([
    [`aws_secret_access_key = ${key}`],
    [`AWS_SECRET_ACCESS_KEY=${key}`],
    [`{"AccessKeyId": "${id}", "SecretAccessKey": "${key}"}`],
    [`Access key ID,Secret access key\n${id},${key}`],
    [`${id} ${key}`],
    [`creds: ${id}:${key}`],
  ])('are masked in %j', (text) => {
    const out = maskSecretValues(text);
    expect(out).not.toContain(key);
    expect(out).not.toContain(id);
  });

  it.each([
    [`aws configure set aws_secret_access_key ${key}`, 'aws configure set aws_secret_access_key [redacted]'],
    [`aws configure set aws_secret_access_key ${key} --profile dev`, 'aws configure set aws_secret_access_key [redacted] --profile dev'],
    [`tool --aws-secret-access-key ${key} --region eu-west-1`, 'tool --aws-secret-access-key [redacted] --region eu-west-1'],
    [`SecretAccessKey '${key}'`, "SecretAccessKey '[redacted]'"],
    [`mc alias set s3 https://s3.example.org minio secret_key=${key}`, 'mc alias set s3 https://s3.example.org minio secret_key=[redacted]'],
  ])('alone after its name, without an access key id, are masked in %j', (text, shown) => {
    expect(maskSecretValues(text)).toBe(shown);
  });

  it('a name alone, or a shorter value after it, is left as it is', () => {
    for (const text of ['aws configure get aws_secret_access_key', 'aws_secret_access_key is not set', `secret_access_key ${'x'.repeat(39)} done`]) {
      expect(maskSecretValues(text)).toBe(text);
    }
  });

  it('a 40-character hex digest beside an access key id is not taken for one', () => {
    const sha = '3550c5c9f1e2d3b4a5968778695a4b3c2d1e0f9a';
    expect(maskSecretValues(`${id} commit ${sha}`)).toContain(sha);
  });
});
