/**
 * The channels' secrets (bot tokens, app secrets), masked in every line the host writes or shows:
 * the server log, a channel's last error, its delivery failures. A token travels in URLs (Telegram's
 * `/bot<token>/`), so its URL-encoded form is masked too; then the common credential shapes are.
 */
import { registerSecret } from '../../events/secret-masker.js';
import { maskSecretValues, SECRET_MASK } from '../../events/secret-values.js';

export class SecretMask {
  private values: string[] = [];

  add(secrets: readonly string[]): void {
    const next = new Set(this.values);
    for (const s of secrets) {
      if (s.length < 4) continue;
      // and everywhere else the server writes or sends text (events, run files, model requests)
      registerSecret(s, 'a chat channel secret');
      next.add(s);
      next.add(encodeURIComponent(s));
    }
    // longest first: a secret that contains another is replaced whole
    this.values = [...next].sort((a, b) => b.length - a.length);
  }

  mask(text: string): string {
    let out = text;
    for (const v of this.values) if (out.includes(v)) out = out.split(v).join(SECRET_MASK);
    return maskSecretValues(out);
  }
}
