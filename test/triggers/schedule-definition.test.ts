import { describe, expect, it } from 'vitest';
import { checkScheduleDefinition, type DefinitionContext } from '../../src/triggers/schedule-definition.js';
import { WebhookAllowList } from '../../src/triggers/webhook-allow.js';
import { secretProblem } from '../../src/triggers/webhook-target.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const ctx = (allow: unknown = undefined): DefinitionContext => ({
  agents: () => ['talk', 'report'],
  inputIssues: (_a, input) => (typeof input.topic === 'number' ? [{ path: 'input.topic', message: 'must be a string' }] : []),
  allow: WebhookAllowList.parse(allow).list,
  now: () => Date.parse('2030-01-01T00:00:00Z'),
});

function issuesOf(body: unknown, c = ctx()): Array<{ path: string; message: string }> {
  const r = checkScheduleDefinition(body, c);
  return r.ok ? [] : r.issues;
}

describe('a schedule as written', () => {
  it('fills the defaults: UTC, overlap skip, missed run_once, enabled', () => {
    const r = checkScheduleDefinition({ agent: 'talk', every: '15m' }, ctx());
    expect(r).toEqual({ ok: true, value: { agent: 'talk', every: '15m', input: {}, tz: 'UTC', overlap: 'skip', missed: 'run_once', enabled: true } });
  });

  it.each([
    ['an invalid cron', { agent: 'talk', cron: '61 * * * *' }, 'cron', /not a cron pattern.*minute/],
    ['a cron of three fields', { agent: 'talk', cron: '* * *' }, 'cron', /5 or 6 fields/],
    ['a cron that never fires', { agent: 'talk', cron: '0 0 30 2 *' }, 'cron', /never fires/],
    ['an unknown zone', { agent: 'talk', cron: '0 6 * * *', tz: 'Mars/Olympus' }, 'tz', /unknown time zone "Mars\/Olympus"/],
    ['every under 1 s', { agent: 'talk', every: '500ms' }, 'every', /at least 1s/],
    ['every that is no duration', { agent: 'talk', every: 'often' }, 'every', /duration/],
    ['an agent that does not exist', { agent: 'nobody', every: '1h' }, 'agent', /unknown agent "nobody" \(agents: talk, report\)/],
    ['no timing', { agent: 'talk' }, 'every', /one of every/],
    ['two timings', { agent: 'talk', every: '1h', cron: '0 * * * *' }, 'cron', /one of every, cron or at/],
    ['an at that is no time', { agent: 'talk', at: 'tomorrow' }, 'at', /ISO time/],
    ['an at that has passed', { agent: 'talk', at: '2020-01-01T00:00:00Z' }, 'at', /has passed/],
    ['a webhook URL that is not http(s)', { agent: 'talk', every: '1h', webhook: { url: 'ftp://example.com/x' } }, 'webhook.url', /http or https/],
    ['a webhook to a loopback address', { agent: 'talk', every: '1h', webhook: { url: 'http://127.0.0.1:9/x' } }, 'webhook.url', /loopback address/],
    [
      'a webhook secret in the wrong format',
      { agent: 'talk', every: '1h', webhook: { url: 'https://example.com/x', secret: 'hunter2' } },
      'webhook.secret',
      /whsec_/,
    ],
    ['an unknown overlap', { agent: 'talk', every: '1h', overlap: 'both' }, 'overlap', /skip or queue/],
    ['an unknown field', { agent: 'talk', every: '1h', colour: 'red' }, '(body)', /unknown field\(s\): colour/],
    ['an input the agent refuses', { agent: 'talk', every: '1h', input: { topic: 3 } }, 'input.topic', /string/],
    ['an announce without a chat', { agent: 'talk', every: '1h', announce: { channel: 'telegram' } }, 'announce.chat', /required/],
  ])('refuses %s, naming the field', (_what, body, path, message) => {
    const issues = issuesOf(body);
    expect(issues.map((i) => i.path)).toContain(path);
    expect(issues.find((i) => i.path === path)!.message).toMatch(message);
  });

  it('a webhook URL must match webhooks.allow when it is set; an entry naming a host exactly allows its loopback address', () => {
    const c = ctx(['https://hooks.example.com/*', 'http://127.0.0.1:8080/*']);
    expect(issuesOf({ agent: 'talk', every: '1h', webhook: { url: 'https://evil.example.net/x' } }, c)[0]).toMatchObject({
      path: 'webhook.url',
      message: expect.stringMatching(/not allowed by webhooks.allow/),
    });
    expect(issuesOf({ agent: 'talk', every: '1h', webhook: { url: 'https://hooks.example.com/a/b', secret: SECRET } }, c)).toEqual([]);
    expect(issuesOf({ agent: 'talk', every: '1h', webhook: { url: 'http://127.0.0.1:8080/hook' } }, c)).toEqual([]);
    expect(issuesOf({ agent: 'talk', every: '1h', webhook: { url: 'http://127.0.0.1:8081/hook' } }, c)[0].path).toBe('webhook.url');
  });

  it('a change keeps what it does not name, and a new timing replaces the old one', () => {
    const base = checkScheduleDefinition({ agent: 'talk', every: '1h', goal: 'g', webhook: { url: 'https://example.com/h' } }, ctx());
    if (!base.ok) throw new Error('base');
    const r = checkScheduleDefinition({ cron: '0 6 * * *', tz: 'Europe/Berlin', webhook: null }, ctx(), { base: base.value });
    expect(r).toMatchObject({ ok: true, value: { agent: 'talk', cron: '0 6 * * *', tz: 'Europe/Berlin', goal: 'g' } });
    if (r.ok) {
      expect(r.value.every).toBeUndefined();
      expect(r.value.webhook).toBeUndefined();
    }
  });
});

describe('Standard Webhooks secrets', () => {
  it('take whsec_ and base64 of 24 to 64 bytes', () => {
    expect(secretProblem(SECRET)).toBeNull();
    expect(secretProblem(`whsec_${Buffer.alloc(16).toString('base64')}`)).toMatch(/16 bytes/);
    expect(secretProblem(`whsec_${Buffer.alloc(65).toString('base64')}`)).toMatch(/65 bytes/);
    expect(secretProblem('whsec_not base64!')).toMatch(/base64/);
    expect(secretProblem(Buffer.alloc(32).toString('base64'))).toMatch(/whsec_/);
  });
});
