/**
 * Credentials inside free text (a command line, a log line, an error message): masked wherever a
 * process payload, a tool call's arguments or result, or a log line carries text, beside the key-based
 * scrubbing of process payloads. `maskSecretValues` also masks the server's own secrets (see
 * secret-masker.ts), so one call covers both.
 *
 * The formats are the ones the common scanners (gitleaks, secretlint's recommended preset, GitHub
 * secret scanning) document. secretlint itself was considered: its rules are asynchronous lint
 * plugins over whole files, which does not fit a synchronous pass on the event path, so the
 * documented token shapes are kept here as one table.
 */

import { SECRET_MASK, serverSecrets } from './secret-masker.js';

export { SECRET_MASK };

interface SecretPattern {
  name: string;
  re: RegExp;
  /** The replacement: the credential part becomes MASK, any label before it is kept. */
  replace: string;
}

const PATTERNS: readonly SecretPattern[] = [
  // PEM private keys, whole blocks
  {
    name: 'private-key',
    re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: SECRET_MASK,
  },
  // user:password@host in any URL scheme (the user name is kept: it says which account)
  { name: 'url-credentials', re: /\b([a-z][a-z0-9+.-]{1,30}:\/\/[^\s:@/?#]{0,200}):[^\s@/?#]{1,500}@/gi, replace: `$1:${SECRET_MASK}@` },
  // Authorization header values
  // (a token has a digit: "Token validation failed" is prose, not a credential)
  { name: 'bearer', re: /\b(Bearer|Basic|Token|Bot|bearer)(\s+)(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{8,}=*/g, replace: `$1$2${SECRET_MASK}` },
  // OpenAI / Anthropic / DeepSeek style keys: sk-…, sk-proj-…, sk-ant-api03-…
  { name: 'sk-key', re: /\bsk-[A-Za-z0-9_-]{16,}/g, replace: SECRET_MASK },
  // Stripe
  { name: 'stripe', re: /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/g, replace: SECRET_MASK },
  // GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained
  { name: 'github', re: /\bgh[pousr]_[A-Za-z0-9]{20,255}\b/g, replace: SECRET_MASK },
  { name: 'github-pat', re: /\bgithub_pat_[A-Za-z0-9_]{22,255}/g, replace: SECRET_MASK },
  // GitLab
  { name: 'gitlab', re: /\bglpat-[A-Za-z0-9_-]{20,}/g, replace: SECRET_MASK },
  // Slack bot/user/app tokens and webhooks
  { name: 'slack', re: /\bxox[abposre]-[A-Za-z0-9-]{10,}/g, replace: SECRET_MASK },
  { name: 'slack-app', re: /\bxapp-\d-[A-Za-z0-9-]{10,}/g, replace: SECRET_MASK },
  { name: 'slack-webhook', re: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/]{20,}/g, replace: SECRET_MASK },
  // an AWS secret access key (40 characters of base64, upper and lower case) written after its access key
  // id, as credentials.csv, `aws configure list` or a pasted pair show them: both are masked
  {
    name: 'aws-secret-access-key',
    re: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b([^\n]{1,80}?)(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    replace: `${SECRET_MASK}$1${SECRET_MASK}`,
  },
  // an AWS secret access key after its name, alone: `aws configure set aws_secret_access_key <key>`,
  // `--aws-secret-access-key <key>`, `SecretAccessKey: <key>` (a space is enough on a command line)
  {
    name: 'aws-secret-access-key-named',
    re: /\b([A-Za-z0-9_.-]*secret[_-]?access[_-]?key)(["']?(?:\s*[:=]\s*|\s+)["']?)(?!\[redacted\])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi,
    replace: `$1$2${SECRET_MASK}`,
  },
  // AWS access key ids
  { name: 'aws-access-key-id', re: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/g, replace: SECRET_MASK },
  // Google API keys
  { name: 'google-api-key', re: /\bAIza[0-9A-Za-z_-]{35}/g, replace: SECRET_MASK },
  // npm and PyPI tokens
  { name: 'npm', re: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: SECRET_MASK },
  { name: 'pypi', re: /\bpypi-[A-Za-z0-9_-]{50,}/g, replace: SECRET_MASK },
  // JSON Web Tokens
  { name: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, replace: SECRET_MASK },
  // key=value / key: value where the key names a secret (password=hunter2, "api_key": "…")
  {
    name: 'assignment',
    // the key ends with the word: max_tokens=4096 or token_count: 12 are counts, not secrets
    re: /\b([A-Za-z0-9_.-]*(?:api[_-]?key|apikey|access[_-]?key|secret(?:[_-]?key)?|passw(?:or)?d|passwd|pwd|token|credentials?|private[_-]?key))(?![A-Za-z0-9_])(["']?\s*[:=]\s*["']?)(?!\[redacted\])([^\s"'&,;}]{4,})/gi,
    replace: `$1$2${SECRET_MASK}`,
  },
];

// One cheap test first: almost all text on the event path holds none of these markers.
const TRIGGER =
  /PRIVATE KEY|:\/\/[^\s/]*:[^\s/]*@|bearer|basic|token|bot\s|sk-|[sr]k_|gh[pousr]_|github_pat_|glpat-|xox|xapp-|hooks\.slack|AKIA|ASIA|ABIA|ACCA|A3T|AIza|npm_|pypi-|eyJ|key|secret|passw|pwd|credential/i;

/** `text` with the server's secrets and every credential-looking value replaced by `[redacted]`; other text is unchanged. */
export function maskSecretValues(text: string): string {
  const known = serverSecrets.mask(text);
  if (known.length < 8 || !TRIGGER.test(known)) return known;
  let out = known;
  for (const p of PATTERNS) {
    p.re.lastIndex = 0;
    out = out.replace(p.re, p.replace);
  }
  return out;
}

/** Names of the formats masked, for docs and tests. */
export const SECRET_VALUE_FORMATS: readonly string[] = PATTERNS.map((p) => p.name);
