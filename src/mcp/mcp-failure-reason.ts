/**
 * Why a connection attempt or a call failed, read off the error the MCP SDK (or the transport) threw:
 * HTTP statuses, network codes, JSON-RPC timeouts and closed connections.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { DiagnosisInit } from '../events/diagnosis.js';
import type { McpServerConfig } from './mcp-config.js';
import { shownUrl } from './mcp-config.js';
import { redact, secretValuesOf, type Reason } from './mcp-diagnosis.js';
import { StdoutNoiseError } from './stdio-group-transport.js';

function httpStatusOf(e: unknown): number | undefined {
  const code = (e as { code?: unknown })?.code;
  const name = (e as Error)?.name ?? (e as object)?.constructor?.name;
  if (typeof code === 'number' && code >= 100 && code < 600 && /StreamableHTTPError|SseError|Error/.test(String(name))) {
    if (!(e instanceof McpError)) return code;
  }
  const m = /\b(40[0-9]|41[0-9]|5\d\d)\b/.exec((e as Error)?.message ?? '');
  if (m && /POSTing|SSE|status|HTTP|Non-200/i.test((e as Error).message)) return Number(m[1]);
  return undefined;
}

function causeCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The reason a connection attempt failed. */
export function connectReason(e: unknown, cfg: McpServerConfig, exit?: { code: number | null; signal: string | null } | null): Reason {
  const t = cfg.transport;
  const where = t.type === 'stdio' ? '' : ` at ${shownUrl(t.url)}`;
  if (e instanceof StdoutNoiseError) {
    return {
      reason: e.message,
      hint: 'a stdio MCP server writes only JSON-RPC messages on stdout (its logs go to stderr): is "command" really an MCP server?',
      retryable: false,
    };
  }
  const status = httpStatusOf(e);
  if (status === 401 || status === 403) {
    return {
      reason: `the server${where} answered ${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'}`,
      hint: `check the credentials in "headers" of server "${cfg.name}" (${t.type === 'stdio' ? '' : Object.keys(t.headers).join(', ') || 'none are set'})`,
      retryable: false,
    };
  }
  if (status !== undefined)
    return { reason: `the server${where} answered HTTP ${status}`, hint: 'check "url": it must be the MCP endpoint (often …/mcp)', retryable: status >= 500 };
  const code = causeCode(e);
  if (code === 'ECONNREFUSED') return { reason: `nothing listens${where} (connection refused)`, hint: 'start the server, or correct "url"', retryable: true };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return { reason: `the host${where} is not found (${code})`, hint: 'correct "url"', retryable: code === 'EAI_AGAIN' };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return { reason: `the connection${where} was reset`, hint: 'is it an MCP server?', retryable: true };
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
    return {
      reason: `it did not answer "initialize" within ${cfg.options.connectTimeoutMs / 1000} s`,
      hint: 'is it an MCP server that speaks this transport? raise connect_timeout_s when it only starts slowly',
      retryable: true,
    };
  }
  const gone = (e instanceof McpError && e.code === ErrorCode.ConnectionClosed) || /the server is not running/.test((e as Error)?.message ?? '');
  if (gone) {
    const how = exit ? (exit.signal ? ` (it was ended by ${exit.signal})` : exit.code !== null ? ` (it exited with code ${exit.code})` : '') : '';
    return {
      reason: `it closed the connection before answering "initialize"${how}`,
      hint: t.type === 'stdio' ? 'run the command by hand to see why it stops' : 'is it an MCP server?',
      retryable: false,
    };
  }
  const msg = (e as Error)?.message ?? String(e);
  if (/fetch failed/i.test(msg)) return { reason: `cannot reach${where || ' the server'} (${code ?? msg})`, hint: 'is the server running?', retryable: true };
  return {
    reason: msg,
    hint: t.type === 'stdio' ? 'run the command by hand to see whether it starts' : 'check "url" and that the server is running',
    retryable: false,
  };
}

/** A failed call (a JSON-RPC error or a closed connection), not a tool's own `isError` result. */
export function callFailure(cfg: McpServerConfig, tool: string, e: unknown, idleTimeoutMs: number): DiagnosisInit {
  const secrets = secretValuesOf(cfg);
  const msg = redact((e as Error)?.message ?? String(e), secrets);
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
    return {
      code: 'mcp_idle_timeout',
      severity: 'error',
      summary: `${cfg.name}/${tool} sent no answer and no progress for ${idleTimeoutMs / 1000} s`,
      detail: msg,
      hint: `raise idle_timeout_s of server "${cfg.name}" when the tool is slow and reports no progress`,
      retryable: true,
    };
  }
  if (e instanceof McpError && e.code === ErrorCode.ConnectionClosed) {
    return {
      code: 'mcp_call_failed',
      severity: 'error',
      summary: `${cfg.name}/${tool} failed: the server closed the connection`,
      detail: msg,
      hint: 'the server stopped or crashed; the next call starts it again',
      retryable: true,
    };
  }
  if (e instanceof McpError && e.code === ErrorCode.InvalidParams) {
    return {
      code: 'mcp_invalid_args',
      severity: 'error',
      summary: `${cfg.name}/${tool} rejected the arguments`,
      detail: msg,
      hint: 'fix the arguments to match the tool schema and call it again',
      retryable: false,
    };
  }
  return { code: 'mcp_call_failed', severity: 'error', summary: `${cfg.name}/${tool} failed: ${msg}`, detail: '', hint: '', retryable: false };
}
