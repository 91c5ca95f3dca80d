/** The channels Runtrail ships, loaded through the extension registry like a code plugin's. */
import type { ChannelDefinition } from './channel-types.js';
import { telegramChannel } from './telegram/telegram-channel.js';

export const BUILTIN_CHANNELS: readonly ChannelDefinition[] = [telegramChannel];
