/**
 * Why an MCP server or call failed, as a Diagnosis a person can act on: the server's name, the
 * reason in words (not "fetch failed"), the tail of its stderr, and what to check. Configured env and
 * header values are masked in every text that leaves here. Free of the MCP SDK, so loading an agent
 * or the server pool does not load it (~100 ms of a CLI start); the reasons of an SDK error are in
 * mcp-failure-reason.ts, loaded with the first connection.
 */
import type { DiagnosisInit } from '../events/diagnosis.js';
import { maskSecretValues, SECRET_MASK } from '../events/secret-values.js';
import type { McpServerConfig } from './mcp-config.js';

const STDERR_LINES = 20;
const STDERR_CHARS = 2_000;

/** The configured values that are secrets by position: env values and header values (4+ characters). */
export function secretValuesOf(cfg: McpServerConfig): string[] {
  const t = cfg.transport;
  // the base environment (PATH, HOME, …) is not a secret; what the definition's `env` sets may be
  const declared = t.type === 'stdio' ? ((cfg.shown.env as string[] | undefined) ?? []).map((k) => t.env[k]) : Object.values(t.headers);
  const out = new Set<string>();
  for (const v of declared) {
    if (typeof v !== 'string' || v.length < 4) continue;
    out.add(v);
    // "Bearer abc…": the token alone may be echoed too
    const parts = v.split(/\s+/).filter((p) => p.length >= 8);
    for (const p of parts) out.add(p);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** `text` with the given values masked. */
export function redactValues(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(SECRET_MASK);
  return out;
}

/** `text` with the given values and anything that looks like a credential masked (diagnoses). */
export function redact(text: string, secrets: readonly string[]): string {
  return maskSecretValues(redactValues(text, secrets));
}

export function stderrTail(stderr: string): string {
  const lines = stderr.replace(/\s+$/, '').split('\n');
  let tail = lines.slice(-STDERR_LINES).join('\n');
  if (tail.length > STDERR_CHARS) tail = `…${tail.slice(-STDERR_CHARS)}`;
  return tail;
}

export interface Reason {
  reason: string;
  hint: string;
  retryable: boolean;
}

/** `mcp_unavailable`: the server could not be connected; names it and shows the tail of its stderr. */
export function unavailableDiagnosis(cfg: McpServerConfig, r: Reason, stderr = ''): DiagnosisInit {
  const secrets = secretValuesOf(cfg);
  const tail = stderr.trim() ? stderrTail(redact(stderr, secrets)) : '';
  return {
    code: 'mcp_unavailable',
    severity: 'error',
    summary: redact(`MCP server "${cfg.name}" is unavailable: ${r.reason}`, secrets),
    detail: tail ? `its stderr ended with:\n${tail}` : cfg.transport.type === 'stdio' ? 'it wrote nothing on stderr' : '',
    hint: redact(`${r.hint} (defined in ${cfg.file})`, secrets),
    retryable: r.retryable,
  };
}
