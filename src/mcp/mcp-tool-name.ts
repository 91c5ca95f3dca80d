/**
 * `mcp__<server>__<tool>`: how an MCP tool is named for the model and in an agent's `tools:` list.
 * Characters outside [A-Za-z0-9_-] become `_` (model APIs accept no others); the original name is
 * what the call sends. Names over 64 characters (the tightest provider limit) are cut and keep a
 * hash of the whole, so two long names stay apart.
 */
import { createHash } from 'node:crypto';
import picomatch from 'picomatch';

export const MCP_TOOL_PREFIX = 'mcp__';
export const MAX_TOOL_NAME = 64;

export function sanitizeToolPart(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

export function mcpToolName(server: string, tool: string): string {
  const name = `${MCP_TOOL_PREFIX}${sanitizeToolPart(server)}__${sanitizeToolPart(tool)}`;
  if (name.length <= MAX_TOOL_NAME) return name;
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}

export function isMcpToolEntry(entry: string): boolean {
  return entry.startsWith(MCP_TOOL_PREFIX);
}

/** `mcp__everything__*` → { server: 'everything', tool: '*' }; null when it does not name a server. */
export function parseMcpToolEntry(entry: string): { server: string; tool: string } | null {
  if (!isMcpToolEntry(entry)) return null;
  const rest = entry.slice(MCP_TOOL_PREFIX.length);
  const cut = rest.indexOf('__');
  if (cut <= 0) return null;
  const tool = rest.slice(cut + 2);
  return tool ? { server: rest.slice(0, cut), tool } : null;
}

/** A matcher for glob entries (`*`, `?`, `{a,b}`); no entries match nothing. */
export function globMatcher(globs: readonly string[]): (name: string) => boolean {
  if (globs.length === 0) return () => false;
  const m = picomatch([...globs], { dot: true, nocase: false });
  return (name) => m(name);
}
