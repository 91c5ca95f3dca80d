/**
 * channels.json through the extension registry: Runtrail's keys and the channel's own, `${VAR}`
 * secrets, code plugins' channels, and each bad input as one problem naming the file and the key —
 * never the secret's value.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILTIN_CHANNELS } from '../../src/channels/builtin-channels.js';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { problemLine } from '../../src/extensions/definition-problem.js';
import { agentFile, makeProject, type ProjectFixture } from './project-fixture.js';

let p: ProjectFixture | null = null;
afterEach(() => {
  p?.cleanup();
  p = null;
});

const TOKEN = '123456:AAE-secret_token_value';

async function load(channels: unknown, env: Record<string, string> = { TG: TOKEN }, files: Record<string, string> = {}) {
  p = makeProject({
    '.runtrail/channels.json': typeof channels === 'string' ? channels : JSON.stringify(channels),
    '.runtrail/agents/chat.md': agentFile('name: chat\ndescription: chats'),
    '.runtrail/agents/helper.md': agentFile('name: helper\ndescription: helps'),
    ...files,
  });
  const registry = await ExtensionRegistry.load({
    projectDir: p.dir,
    builtins: [],
    builtinSkillsDir: join(p.dir, 'none'),
    builtinChannels: [...BUILTIN_CHANNELS],
    env,
  });
  return { registry, lines: registry.problems.map((x) => `${x.level}: ${problemLine(x)}`) };
}

describe('channels.json', () => {
  it('a valid entry: Runtrail keys as policy, the channel keys expanded, the secret known for masking', async () => {
    const { registry, lines } = await load({
      telegram: { token: '${TG}', api_root: 'http://127.0.0.1:9', allow_from: [42, '-1001'], agents: ['chat', 'helper'], require_mention: false },
    });
    expect(lines).toEqual([]);
    const c = registry.channels.get('telegram')!;
    expect(c).toMatchObject({ type: 'telegram', file: '.runtrail/channels.json', config: { token: TOKEN, api_root: 'http://127.0.0.1:9' }, secrets: [TOKEN] });
    expect(c.policy).toEqual({ allowFrom: ['42', '-1001'], agents: ['chat', 'helper'], defaultAgent: 'chat', requireMention: false });
    expect(c.unusable).toBeUndefined();
  });

  it('a second bot of one type by `type`; `enabled: false` leaves an entry out', async () => {
    const { registry, lines } = await load({ support: { type: 'telegram', token: '${TG}', allow_from: [1] }, telegram: { enabled: false, token: '${TG}' } });
    expect(lines).toEqual([]);
    expect([...registry.channels.keys()]).toEqual(['support']);
  });

  const bad: Array<[string, unknown, Record<string, string>, RegExp]> = [
    ['not an object', '[1, 2]', { TG: TOKEN }, /^error: \.runtrail\/channels\.json: must be an object of channels by name/],
    ['not JSON', '{ "telegram": ', { TG: TOKEN }, /^error: \.runtrail\/channels\.json: is not valid JSON/],
    [
      'unknown type',
      { telegramm: { token: '${TG}', allow_from: [1] } },
      { TG: TOKEN },
      /^error: \.runtrail\/channels\.json: telegramm: unknown channel type "telegramm" \(known: feishu, slack, telegram\)/,
    ],
    [
      'unknown type named by type',
      { bot: { type: 'whatsapp', allow_from: [1] } },
      { TG: TOKEN },
      /^error: \.runtrail\/channels\.json: bot\.type: unknown channel type "whatsapp"/,
    ],
    [
      'allow_from not a list',
      { telegram: { token: '${TG}', allow_from: '42' } },
      { TG: TOKEN },
      /^error: \.runtrail\/channels\.json: telegram\.allow_from: must be array/,
    ],
    ['no token', { telegram: { allow_from: [1] } }, { TG: TOKEN }, /^error: \.runtrail\/channels\.json: telegram\.token: is required$/],
    [
      'unset variable',
      { telegram: { token: '${TG_MISSING}', allow_from: [1] } },
      {},
      /^error: \.runtrail\/channels\.json: telegram\.token: uses \$\{TG_MISSING\}, which is not set in the environment/,
    ],
    [
      'unknown key',
      { telegram: { token: '${TG}', allow_from: [1], api_rooot: 'x' } },
      { TG: TOKEN },
      /^error: \.runtrail\/channels\.json: telegram\.api_rooot: is not a known field/,
    ],
    [
      'api_root with a trailing slash',
      { telegram: { token: '${TG}', allow_from: [1], api_root: 'https://api.telegram.org/' } },
      { TG: TOKEN },
      /^error: \.runtrail\/channels\.json: telegram\.api_root: /,
    ],
    [
      'a token of the wrong shape',
      { telegram: { token: '${TG}', allow_from: [1] } },
      { TG: 'not-a-token' },
      /^error: \.runtrail\/channels\.json: telegram\.token: must match pattern/,
    ],
    [
      'an unknown agent',
      { telegram: { token: '${TG}', allow_from: [1], agents: ['chat', 'nope'] } },
      { TG: TOKEN },
      /^error: \.runtrail\/channels\.json: telegram\.agents\[1\]: unknown agent "nope" \(agents: chat, helper\)/,
    ],
    [
      'default_agent not among agents',
      { telegram: { token: '${TG}', allow_from: [1], agents: ['helper'] } },
      { TG: TOKEN },
      /^error: \.runtrail\/channels\.json: telegram\.default_agent: "chat" is not among the channel's agents \(helper\)/,
    ],
    [
      'a secret written into the file',
      { telegram: { token: TOKEN, allow_from: [1] } },
      {},
      /^warning: \.runtrail\/channels\.json: telegram\.token: holds a secret written into the file; write it as "\$\{VARIABLE\}"/,
    ],
    [
      'nobody allowed',
      { telegram: { token: '${TG}' } },
      { TG: TOKEN },
      /^warning: \.runtrail\/channels\.json: telegram\.allow_from: is empty: everyone who writes to the bot is refused/,
    ],
  ];
  for (const [what, channels, env, line] of bad) {
    it(`${what}: one problem naming the file and the key, without the secret`, async () => {
      const { lines } = await load(channels, env);
      expect(
        lines.filter((l) => line.test(l)),
        lines.join('\n'),
      ).toHaveLength(1);
      expect(lines.join('\n')).not.toContain('AAE-secret_token_value');
    });
  }

  it('an entry with an unset variable or a bad key is loaded as unusable: the host reports why and does not start it', async () => {
    const { registry } = await load({ telegram: { token: '${TG_MISSING}', allow_from: [1] } }, {});
    expect(registry.channels.get('telegram')!.unusable).toBe('${TG_MISSING} is not set in the environment');
  });

  it("a code plugin's channel is a channel type like the builtins; one named like a builtin is refused", async () => {
    const plugin = `import { defineChannel } from 'runtrail';
export default {
  name: 'echo-plugin',
  channels: [
    defineChannel({ name: 'echo-chat', secretKeys: ['key'], configSchema: { type: 'object', properties: { key: { type: 'string' } } }, async start() { throw new Error('not here'); } }),
    { name: 'telegram', async start() { throw new Error('x'); } },
    { name: 'broken' },
  ],
};
`;
    const { registry, lines } = await load(
      { mine: { type: 'echo-chat', key: '${K}', allow_from: ['u1'] } },
      { K: 'k-value-1' },
      { '.runtrail/plugins/echo.ts': plugin },
    );
    expect(registry.channelTypes.get('echo-chat')?.source).toBe('.runtrail/plugins/echo.ts');
    expect(registry.channels.get('mine')).toMatchObject({ type: 'echo-chat', config: { key: 'k-value-1' }, secrets: ['k-value-1'] });
    expect(lines).toContain(
      'error: .runtrail/plugins/echo.ts: channels (telegram): clashes with the builtin channel "telegram"; the plugin\'s channel is not loaded (rename it)',
    );
    expect(lines).toContain('error: .runtrail/plugins/echo.ts: channels[2] (broken).start: must be a function (ctx) => Promise<connection>');
  });
});
