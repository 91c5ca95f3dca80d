/** Tool results whose `content` is JSON, so models and the offline procedures can parse them. */
import type { ToolResult } from './tool.js';

export function okResult(data: Record<string, unknown>, details?: Record<string, unknown>): ToolResult {
  return { ok: true, content: JSON.stringify({ ok: true, ...data }), details: details ?? data };
}

export function errorResult(code: string, summary: string, detail = '', hint = '', extra: Record<string, unknown> = {}): ToolResult {
  return {
    ok: false,
    content: JSON.stringify({ ok: false, error: summary, ...(detail ? { detail } : {}), ...(hint ? { hint } : {}), ...extra }),
    details: { code, ...extra },
    diagnosis: { code, severity: 'error', summary, detail, hint, retryable: false },
  };
}
