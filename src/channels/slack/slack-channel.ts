/**
 * The builtin Slack channel: a Slack app over Socket Mode (@slack/socket-mode) for what comes in and
 * the Web API (@slack/web-api) for what goes out. Socket Mode opens an outbound WebSocket, so the
 * bot works behind NAT and with Runtrail's server on loopback (its default): the Events API over HTTP
 * would need a public HTTPS URL and a signing secret, which is exactly what that default avoids.
 * `api_url` points both at another Slack API (a test's). The SDKs load with the first start.
 */
import { defineChannel } from '../define-channel.js';

/** Slack truncates `text` past 40,000 characters and asks to keep it within 4,000. */
export const slackChannel = defineChannel({
  name: 'slack',
  description: 'Slack app (Socket Mode in, Web API out)',
  secretKeys: ['bot_token', 'app_token'],
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['bot_token', 'app_token'],
    properties: {
      bot_token: { type: 'string', pattern: '^xoxb-[A-Za-z0-9-]+$', description: 'the Bot User OAuth Token (xoxb-…)' },
      app_token: { type: 'string', pattern: '^xapp-[A-Za-z0-9-]+$', description: 'an app-level token with connections:write (xapp-…), for Socket Mode' },
      api_url: { type: 'string', pattern: '^https?://[^\\s]+[^/\\s]$', description: 'the Web API root, without a trailing slash (https://slack.com/api)' },
      edit_interval_ms: {
        type: 'integer',
        minimum: 200,
        maximum: 60_000,
        description: 'least time between two edits of a reply in one chat (1500: chat.update allows about 50 a minute)',
      },
    },
  },
  async start(ctx) {
    const { startSlack } = await import('./slack-connection.js');
    return startSlack(ctx);
  },
  async check(config, signal) {
    const { checkSlack } = await import('./slack-connection.js');
    return checkSlack(config, signal);
  },
});
