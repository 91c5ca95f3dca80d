/**
 * A project with chat channels, as `runtrail serve` runs it: the registry (builtin channels included),
 * a RunService over the project's data dir and a ChannelHost over the registry's channels. Agents use
 * `script:` models named in their own files (the chat cannot name one).
 */
import { join } from 'node:path';
import { BUILTIN_CHANNELS } from '../../src/channels/builtin-channels.js';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { ChannelHost } from '../../src/server/channel-host/channel-host.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';

export interface Harness {
  p: ProjectFixture;
  dataDir: string;
  registry: ExtensionRegistry;
  service: RunService;
  host: ChannelHost;
  logs: string[];
  /** Stops the host and the service (a restart is `start` again over the same project). */
  stop(): Promise<void>;
}

export function scriptAgent(name: string, turns: unknown[], extra = ''): Record<string, string> {
  return {
    [`.runtrail/agents/${name}.md`]: agentFile(
      `name: ${name}\ndescription: ${name} for the channel tests\nmodel: script:${name}.turns.json${extra ? `\n${extra}` : ''}`,
    ),
    [`.runtrail/agents/${name}.turns.json`]: JSON.stringify(turns),
  };
}

export async function startHarness(p: ProjectFixture, env: Record<string, string> = {}): Promise<Harness> {
  const dataDir = join(p.dir, '.runtrail');
  const registry = await ExtensionRegistry.load({
    projectDir: p.dir,
    builtins: [],
    builtinSkillsDir: join(p.dir, 'none'),
    builtinChannels: [...BUILTIN_CHANNELS],
    env,
  });
  const service = new RunService({ dataDir, agentSource: registry, env: {}, cwd: p.dir, processRegistry: null });
  await service.init();
  const logs: string[] = [];
  const host = new ChannelHost({
    service,
    channels: [...registry.channels.values()],
    dataDir,
    agents: () => registry.list(),
    log: (line) => logs.push(line),
    restart: { baseMs: 100, capMs: 1000 },
  });
  host.start();
  return {
    p,
    dataDir,
    registry,
    service,
    host,
    logs,
    async stop() {
      await host.stop();
      await service.close();
    },
  };
}

export function project(files: Record<string, string>): ProjectFixture {
  return makeProject(files);
}
