/** Each configured channel checked against its service (who the bot is), as `doctor` and `channels check` print it. */
import type { ConfiguredChannel } from '../../extensions/channel-config.js';
import { SecretMask } from './secret-mask.js';

export interface ChannelCheckRow {
  name: string;
  status: 'ok' | 'fail';
  detail: string;
}

export async function checkChannels(channels: readonly ConfiguredChannel[], timeoutMs = 20_000): Promise<ChannelCheckRow[]> {
  const mask = new SecretMask();
  for (const c of channels) mask.add(c.secrets);
  return Promise.all(
    channels.map(async (c): Promise<ChannelCheckRow> => {
      const name = `channel ${c.name}`;
      if (c.unusable) return { name, status: 'fail', detail: mask.mask(`${c.unusable} (${c.file})`) };
      if (!c.definition.check) return { name, status: 'ok', detail: `${c.type}: configured (this channel type has no check)` };
      try {
        const r = await c.definition.check(c.config, AbortSignal.timeout(timeoutMs));
        return r.ok
          ? { name, status: 'ok', detail: mask.mask(`${c.type}: ${r.detail}`) }
          : { name, status: 'fail', detail: mask.mask(`${c.type}: ${r.error}`) };
      } catch (e) {
        return { name, status: 'fail', detail: mask.mask(`${c.type}: ${(e as Error)?.message ?? String(e)}`) };
      }
    }),
  );
}
