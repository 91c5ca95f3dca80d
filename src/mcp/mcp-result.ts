/**
 * An MCP `CallToolResult` as the observation the model reads: text parts joined, `structuredContent`
 * kept in `details` and shown as JSON, images and audio saved under `artifacts/mcp/<server>/` and
 * referenced (images also go to vision models), `isError` a failed call with a diagnosis, and a
 * result over `max_result_chars` saved whole as an artifact while the model reads its head and path.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolImage, ToolResult } from '../tools/tool.js';
import { redactValues } from './mcp-diagnosis.js';

/** Where a run's files go (the run's WorkspaceAccess fits). */
export interface ArtifactWriter {
  writeArtifact(relPath: string, content: string | Uint8Array): Promise<{ path: string; bytes: number }>;
}

export interface ResultContext {
  server: string;
  tool: string;
  callId: string;
  maxChars: number;
  artifacts?: ArtifactWriter;
  /** Configured env/header values: masked in what the model reads. */
  secrets: readonly string[];
}

const VISION_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/ogg': 'ogg',
  'audio/webm': 'webm',
  'application/json': 'json',
  'text/plain': 'txt',
};

function safe(s: string): string {
  return (
    s
      .replace(/[^A-Za-z0-9_.-]/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 80) || 'x'
  );
}

function extOf(mime: string | undefined): string {
  return (mime && EXT[mime.toLowerCase()]) || 'bin';
}

export async function toToolResult(result: CallToolResult, c: ResultContext): Promise<ToolResult> {
  const one = result.content?.length === 1 ? result.content[0] : undefined;
  // the common case (one short text part, nothing else): no artifacts folder, no JSON, nothing to mask
  if (one?.type === 'text' && !result.isError && result.structuredContent === undefined && one.text.length <= c.maxChars && c.secrets.length === 0) {
    return { ok: true, content: one.text || '(no content)', details: { server: c.server, tool: c.tool } };
  }
  const base = `mcp/${safe(c.server)}/${safe(c.tool)}-${safe(c.callId)}`;
  const texts: string[] = [];
  const images: ToolImage[] = [];
  const saved: Array<{ path: string; bytes: number; mimeType: string }> = [];
  let n = 0;
  const save = async (data: string, mimeType: string, what: string): Promise<void> => {
    const bytes = Buffer.from(data, 'base64');
    if (!c.artifacts) {
      texts.push(`[${what} (${mimeType}, ${bytes.length} bytes) not saved: this run has no artifacts folder]`);
      return;
    }
    const w = await c.artifacts.writeArtifact(`${base}-${++n}.${extOf(mimeType)}`, bytes);
    saved.push({ path: `artifacts/${w.path}`, bytes: w.bytes, mimeType });
    texts.push(`[${what} saved: artifacts/${w.path} (${mimeType}, ${w.bytes} bytes)]`);
  };
  for (const part of result.content ?? []) {
    switch (part.type) {
      case 'text':
        texts.push(part.text);
        break;
      case 'image':
        await save(part.data, part.mimeType, 'image');
        if (VISION_TYPES.has(part.mimeType.toLowerCase()))
          images.push({ mediaType: part.mimeType.toLowerCase(), data: part.data, label: saved.at(-1)?.path ?? `${c.tool} image` });
        break;
      case 'audio':
        await save(part.data, part.mimeType, 'audio');
        break;
      case 'resource': {
        const r = part.resource;
        if ('text' in r && typeof r.text === 'string') texts.push(`[resource ${r.uri}]\n${r.text}`);
        else if ('blob' in r && typeof r.blob === 'string') await save(r.blob, r.mimeType ?? 'application/octet-stream', `resource ${r.uri}`);
        break;
      }
      case 'resource_link':
        texts.push(`[resource link: ${part.uri}${part.name ? ` (${part.name})` : ''}${part.description ? ` — ${part.description}` : ''}]`);
        break;
      default:
        texts.push(`[${(part as { type: string }).type} content]`);
    }
  }
  const structured =
    c.secrets.length && result.structuredContent !== undefined
      ? (JSON.parse(redactValues(JSON.stringify(result.structuredContent), c.secrets)) as unknown)
      : result.structuredContent;
  let content = texts.join('\n');
  if (structured !== undefined) {
    const json = JSON.stringify(structured);
    // servers send the same JSON as text for older clients: once is enough
    const dup = texts.some((t) => sameJson(t, structured));
    content = dup ? json : [json, ...texts].filter(Boolean).join('\n');
  }
  // a server that echoes its configuration (get-env) must not hand the model its credentials
  if (c.secrets.length) content = redactValues(content, c.secrets);
  const details: Record<string, unknown> = { server: c.server, tool: c.tool };
  if (structured !== undefined) details.structuredContent = structured;
  if (saved.length) details.artifacts = saved;
  if (content.length > c.maxChars) {
    const total = content.length;
    let where = '';
    if (c.artifacts) {
      const w = await c.artifacts.writeArtifact(`${base}.${structured !== undefined && !texts.length ? 'json' : 'txt'}`, content);
      where = `artifacts/${w.path}`;
      details.full_result = { path: where, chars: total, bytes: w.bytes };
    }
    content = `${content.slice(0, c.maxChars)}\n\n[result cut at ${c.maxChars.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} characters${where ? `; the whole result is in ${where} — read it with read_file, a part at a time` : ''}]`;
  }
  if (result.isError) {
    const detail = content.slice(0, 2_000);
    return {
      ok: false,
      content: `Error: ${c.server}/${c.tool} returned an error${detail ? ` — ${detail}` : ''}`,
      details,
      diagnosis: {
        code: 'mcp_tool_error',
        severity: 'error',
        summary: `${c.server}/${c.tool} returned an error`,
        detail,
        hint: 'read the error, fix the arguments or the request, and call it again',
        retryable: false,
      },
      ...(images.length ? { images } : {}),
    };
  }
  return { ok: true, content: content || '(no content)', details, ...(images.length ? { images } : {}) };
}

function sameJson(text: string, value: unknown): boolean {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return false;
  try {
    return JSON.stringify(JSON.parse(t)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
