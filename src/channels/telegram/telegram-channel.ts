/**
 * The builtin Telegram channel: a bot over the Bot API (grammY's client), long polling `getUpdates`
 * with the offset kept across restarts. `api_root` points it at another Bot API server (a local one,
 * or a test's). The SDK loads with the first start, so a project without channels never pays for it.
 */
import { defineChannel } from '../define-channel.js';

export const telegramChannel = defineChannel({
  name: 'telegram',
  description: 'Telegram bot (Bot API, long polling)',
  secretKeys: ['token'],
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['token'],
    properties: {
      token: { type: 'string', pattern: '^[0-9]+:[A-Za-z0-9_-]+$', description: "the bot's token from @BotFather (123456:ABC-…)" },
      api_root: {
        type: 'string',
        pattern: '^https?://[^\\s]+[^/\\s]$',
        description: 'the Bot API server, without a trailing slash (https://api.telegram.org)',
      },
      poll_timeout_s: { type: 'integer', minimum: 0, maximum: 50 },
      edit_interval_ms: { type: 'integer', minimum: 200, maximum: 60_000, description: 'least time between two edits of a reply in a private chat (1000)' },
      group_edit_interval_ms: {
        type: 'integer',
        minimum: 200,
        maximum: 60_000,
        description: 'the same in a group (3000: Telegram allows about 20 messages a minute there)',
      },
    },
  },
  async start(ctx) {
    const { startTelegram } = await import('./telegram-connection.js');
    return startTelegram(ctx);
  },
  async check(config, signal) {
    const { checkTelegram } = await import('./telegram-connection.js');
    return checkTelegram(config, signal);
  },
});
