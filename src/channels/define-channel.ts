/**
 * `defineChannel`: a typed identity helper for a channel extension, as `defineTool` is for a tool. A
 * code plugin lists channels in its default export (`channels: [defineChannel({...})]`); the builtin
 * channels (telegram, slack, feishu) are defined the same way.
 */
import type { ChannelDefinition } from './channel-types.js';

export function defineChannel<C extends ChannelDefinition>(channel: C): C {
  return channel;
}
