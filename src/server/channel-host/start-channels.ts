/** The channel host of a serving process: started over the registry's channels, or null when there are none. */
import type { ExtensionRegistry } from '../../extensions/extension-registry.js';
import type { Agent } from '../../runtime/agent.js';
import type { RunServiceApi } from '../../runtime/run-service-types.js';
import { ChannelHost } from './channel-host.js';

export function startChannels(registry: ExtensionRegistry, service: RunServiceApi, dataDir: string, agents: () => Agent[]): ChannelHost | null {
  if (!registry.channels.size) return null;
  const host = new ChannelHost({ service, channels: [...registry.channels.values()], dataDir, agents });
  host.start();
  return host;
}
