/**
 * The builtin Feishu / Lark channel: a self-built app over the open platform SDK
 * (@larksuiteoapi/node-sdk), events through its long connection (no public URL needed), replies
 * as interactive cards — a card can be updated in place without Feishu's cap of 20 edits of a text
 * message, and carries the approval buttons. `domain` picks Feishu (https://open.feishu.cn), Lark
 * (https://open.larksuite.com) or a test's server. The SDK loads with the first start.
 */
import { defineChannel } from '../define-channel.js';

/**
 * Characters of one card. A card's request may be 30 KB; the text travels JSON-encoded twice (the
 * card, then the message's `content`), so a character costs up to 4 bytes (a quote: `\\\"`): 6,000
 * characters stay within 24 KB and leave room for the card around them.
 */
export const feishuChannel = defineChannel({
  name: 'feishu',
  description: 'Feishu / Lark app (long connection in, cards out)',
  secretKeys: ['app_secret'],
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['app_id', 'app_secret'],
    properties: {
      app_id: { type: 'string', pattern: '^cli_[0-9a-fA-F]{16}$', description: "the app's App ID (cli_ and 16 hex digits)" },
      app_secret: { type: 'string', minLength: 8, description: "the app's App Secret" },
      domain: {
        type: 'string',
        pattern: '^https?://[^\\s]+[^/\\s]$',
        description: 'the open platform, without a trailing slash (https://open.feishu.cn; Lark: https://open.larksuite.com)',
      },
      edit_interval_ms: {
        type: 'integer',
        minimum: 200,
        maximum: 60_000,
        description: 'least time between two updates of a reply card (1000: a card takes at most 5 updates a second)',
      },
    },
  },
  async start(ctx) {
    const { startFeishu } = await import('./feishu-connection.js');
    return startFeishu(ctx);
  },
  async check(config, signal) {
    const { checkFeishu } = await import('./feishu-connection.js');
    return checkFeishu(config, signal);
  },
});
