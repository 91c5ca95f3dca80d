/** The channels Runtrail ships, loaded through the extension registry like a code plugin's. */
import type { ChannelDefinition } from './channel-types.js';
import { feishuChannel } from './feishu/feishu-channel.js';
import { slackChannel } from './slack/slack-channel.js';
import { telegramChannel } from './telegram/telegram-channel.js';

export const BUILTIN_CHANNELS: readonly ChannelDefinition[] = [telegramChannel, slackChannel, feishuChannel];
