/**
 * `runtrail channels list`: the chat channels of channels.json (project and user) and whether each can
 * start. `runtrail channels check [name]`: each one asked of its service (who the bot is).
 * `runtrail channels run`: the channels and the runs they start, without the HTTP server, until Ctrl-C.
 */
import { checkChannels } from '../../server/channel-host/check-channels.js';
import { defaultSkillsDir } from '../../runtime/package-root.js';
import { parse } from '../args.js';
import { EXIT, UsageError, type CliDeps } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { dataDirOf, loadRegistry, projectDirOf, reportProblems } from '../project-context.js';

export const CHANNELS_USAGE = `Usage: runtrail channels <list|check|run> [options]
  channels list [--json]           the channels of .runtrail/channels.json (and ~/.runtrail/) and whether each can start
  channels check [name] [--json]   ask each channel's service who the bot is (a wrong token, an unreachable API root)
  channels run                     start the channels (and the runs they start) without the HTTP server, until Ctrl-C
`;

export const channelsCommand: CliCommand = {
  name: 'channels',
  help: CHANNELS_USAGE,
  usage: `  channels            chat channels (Telegram, Slack, Feishu/Lark): list, check, run (without the
                      HTTP server; \`serve\` starts them too)
`,
  async run(args, deps) {
    const { sub, rest } = subcommandOf(args);
    switch (sub) {
      case 'list':
      case 'check':
        return listOrCheck(sub, rest, deps);
      case 'run':
        return runChannels(rest, deps);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        deps.stdout.write(CHANNELS_USAGE);
        return sub === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(`unknown channels command ${JSON.stringify(sub)}\n${CHANNELS_USAGE}`);
    }
  },
};

/** The options every command takes that come with a value: `channels --project DIR list` reads as `channels list --project DIR`. */
const VALUE_OPTIONS = new Set(['--project', '--data-dir']);

/** The subcommand is the first word that is not an option (or an option's value); the options keep their place. */
function subcommandOf(args: string[]): { sub: string | undefined; rest: string[] } {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (VALUE_OPTIONS.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith('--') && a !== '--help') continue;
    return { sub: a, rest: [...args.slice(0, i), ...args.slice(i + 1)] };
  }
  return { sub: undefined, rest: args };
}

async function listOrCheck(sub: 'list' | 'check', args: string[], deps: CliDeps): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  if (sub === 'list' && positionals.length) throw new UsageError('channels list takes no arguments');
  if (positionals.length > 1) throw new UsageError('channels check takes at most one channel name');
  const registry = await loadRegistry(projectDirOf(values, deps), deps);
  reportProblems(registry, deps, false);
  let channels = [...registry.channels.values()];
  if (positionals[0]) {
    channels = channels.filter((c) => c.name === positionals[0]);
    if (!channels.length) throw new UsageError(`no channel "${positionals[0]}" (channels: ${[...registry.channels.keys()].join(', ') || 'none'})`);
  }
  if (sub === 'list') {
    const rows = channels.map((c) => ({
      name: c.name,
      type: c.type,
      file: c.file,
      allow_from: c.policy.allowFrom.length,
      agents: c.policy.agents ?? null,
      default_agent: c.policy.defaultAgent,
      usable: !c.unusable,
      ...(c.unusable ? { why: c.unusable } : {}),
    }));
    if (values.json) deps.stdout.write(`${JSON.stringify({ channels: rows })}\n`);
    else if (!rows.length) deps.stdout.write('no channels configured (.runtrail/channels.json)\n');
    else
      for (const r of rows)
        deps.stdout.write(
          `${r.usable ? '✓' : '✗'} ${r.name} (${r.type}, ${r.file}): ${r.usable ? `${r.allow_from} allowed id(s), default agent ${r.default_agent}${r.agents ? `, agents ${r.agents.join(', ')}` : ''}` : r.why}\n`,
        );
    return rows.every((r) => r.usable) ? EXIT.ok : EXIT.failed;
  }
  const checks = await checkChannels(channels);
  const ok = checks.every((c) => c.status === 'ok');
  if (values.json) deps.stdout.write(`${JSON.stringify({ ok, checks })}\n`);
  else if (!checks.length) deps.stdout.write('no channels configured (.runtrail/channels.json)\n');
  else for (const c of checks) deps.stdout.write(`${c.status === 'ok' ? '✓' : '✗'} ${c.name}: ${c.detail}\n`);
  return ok ? EXIT.ok : EXIT.failed;
}

async function runChannels(args: string[], deps: CliDeps): Promise<number> {
  const { values, positionals } = parse(args, {});
  if (positionals.length) throw new UsageError('channels run takes no arguments');
  if (!deps.serve) throw new UsageError('channels run is not available in this build');
  const projectDir = projectDirOf(values, deps);
  const node = await deps.serve({
    dataDir: dataDirOf(values, deps, projectDir),
    projectDir,
    strict: values.strict === true,
    channelsOnly: true,
    skillsDir: deps.skillsDir ?? defaultSkillsDir(),
    env: deps.env,
  });
  deps.stdout.write(`${node.describe ?? 'runtrail channels running'} (Ctrl-C to stop)\n`);
  let off: (() => void) | undefined;
  await new Promise<void>((resolveStop) => {
    off = deps.onInterrupt?.(() => resolveStop());
    if (!deps.onInterrupt) resolveStop();
  });
  await node.close();
  off?.();
  return EXIT.ok;
}
