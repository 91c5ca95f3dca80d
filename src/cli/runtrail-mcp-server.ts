/**
 * Runtrail as an MCP server, so Claude Desktop, Claude Code or any MCP client can drive
 * it: tools `list_agents`, `start_run` (progress notifications while the run goes; the final answer
 * and the artifacts, or at once with `wait: false`), `get_run`, `list_runs`, `cancel_run`, and every
 * run's artifacts as resources `runtrail://runs/<run_id>/artifacts/<path>`. One McpServer per client
 * session, all over the same RunService.
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { RUN_STATUSES, type AgentEvent, type RunStatus } from '../events/agent-event.js';
import type { AgentSource } from '../runtime/agent-registry.js';
import { pluginInputJsonSchema } from '../runtime/plugin-input.js';
import { RunRequestError } from '../runtime/run-request-error.js';
import type { RunServiceApi, RunStatusFile } from '../runtime/run-service-types.js';
import { sourceLabel } from './commands/agents.js';

export const ARTIFACT_URI_PREFIX = 'runtrail://runs/';
const TEXT_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.jsonl': 'application/x-ndjson',
};
const BINARY_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
};

export function artifactUri(runId: string, relPath: string): string {
  const rel = relPath.replace(/^artifacts\//, '');
  return `${ARTIFACT_URI_PREFIX}${runId}/artifacts/${rel.split('/').map(encodeURIComponent).join('/')}`;
}

function mimeOf(path: string): string {
  const ext = extname(path).toLowerCase();
  return TEXT_TYPES[ext] ?? BINARY_TYPES[ext] ?? 'application/octet-stream';
}

export interface RuntrailMcpDeps {
  service: RunServiceApi;
  agents: AgentSource;
  /** Model used when start_run names none and the agent has none (e.g. RUNTRAIL_MODEL is read by the service). */
  version: string;
}

function json(value: unknown, isError = false): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value, null, 2) }],
    structuredContent: value as Record<string, unknown>,
    ...(isError ? { isError: true } : {}),
  };
}

function requestError(e: unknown): CallToolResult {
  if (e instanceof RunRequestError) {
    const issues = (e.details.issues ?? []).map((i) => `${i.path}: ${i.message}`);
    return {
      isError: true,
      content: [
        {
          type: 'text',
          text: [
            `${e.code}: ${e.message}`,
            ...issues.map((i) => `- ${i}`),
            ...(e.details.validPlugins ? [`valid agents: ${e.details.validPlugins.join(', ')}`] : []),
          ].join('\n'),
        },
      ],
    };
  }
  return { isError: true, content: [{ type: 'text', text: (e as Error)?.message ?? String(e) }] };
}

function artifactsOf(s: RunStatusFile): Array<{ path: string; bytes: number; uri: string; mimeType: string }> {
  return s.public_documents.map((d) => ({ path: d.path, bytes: d.bytes, uri: artifactUri(s.run_id, d.path), mimeType: mimeOf(d.path) }));
}

function summary(s: RunStatusFile): Record<string, unknown> {
  return {
    run_id: s.run_id,
    status: s.status,
    agent: s.plugin,
    goal: s.goal,
    model: `${s.provider}:${s.model}`,
    created_at: s.created_at,
    finished_at: s.finished_at,
    final_answer: s.final_answer,
    ...(s.diagnosis ? { diagnosis: s.diagnosis } : {}),
    artifacts: artifactsOf(s),
  };
}

/** What a person watching would want to know about an event, or null for the ones that say nothing new. */
function progressLine(ev: AgentEvent): string | null {
  switch (ev.stream) {
    case 'run':
      return ev.data.type === 'run.state' ? `state: ${ev.data.to}` : ev.data.type === 'notice' ? `notice: ${ev.data.text}` : null;
    case 'tool': {
      const d = ev.data;
      if (d.phase === 'start') return `tool ${d.server ? `${d.server}/${d.serverTool ?? d.name}` : d.name} started`;
      if (d.phase === 'result') return `tool ${d.name} ${d.isError ? `failed: ${d.result.slice(0, 200)}` : 'ok'}`;
      return null;
    }
    case 'process': {
      const p = ev.data.event;
      if (p.targetType === 'runtime' || p.status === 'started' || p.status === 'queued') return null;
      const n = p.current !== undefined ? ` ${p.current}${p.total !== undefined ? `/${p.total}` : ''}` : '';
      return `${p.operationId}: ${p.status}${n}${p.message ? ` ${p.message}` : ''}`.slice(0, 300);
    }
    default:
      return null;
  }
}

export function createRuntrailMcpServer(deps: RuntrailMcpDeps): McpServer {
  const { service, agents } = deps;
  const server = new McpServer({ name: 'runtrail', version: deps.version }, { capabilities: { tools: {}, resources: {} } });

  server.registerTool(
    'list_agents',
    {
      description: "The agents Runtrail can run (builtins, ~/.runtrail and the project's): name, description, input schema, artifacts.",
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    async () =>
      json({
        agents: agents.list().map((a) => ({
          name: a.name,
          version: a.version,
          description: a.description,
          source: sourceLabel(a.source),
          model: a.model ?? null,
          input_schema: pluginInputJsonSchema(a),
          artifacts: a.artifacts.map((x) => ({ path: x.path, type: x.type, required: x.required, description: x.description })),
        })),
      }),
  );

  server.registerTool(
    'start_run',
    {
      description:
        "Start a run of an agent. With wait (the default) it reports progress while the run goes and returns the final answer and the artifacts (as resource links); with wait: false it returns the run id at once (then use get_run), but the run still lives in this server's process: when the client disconnects the server stops and cancels its unfinished runs (their status says so). Input is what `runtrail run` takes: file inputs may be local paths.",
      inputSchema: {
        agent: z.string().min(1).describe('agent name (list_agents)'),
        goal: z.string().optional().describe("what the run should achieve; default the agent's own goal"),
        input: z.record(z.string(), z.unknown()).optional().describe("the agent's input (see its input_schema)"),
        wait: z.boolean().optional().describe('wait for the run to finish (default true)'),
        model: z.string().optional().describe('model spec, e.g. anthropic:claude-sonnet-4-5 or offline'),
        conversation_id: z.string().optional().describe("continue a conversation: earlier runs' goals and answers are history"),
      },
    },
    async (args, extra) => {
      let created: RunStatusFile;
      try {
        created = await service.create({
          plugin: args.agent,
          input: args.input ?? {},
          ...(args.goal ? { goal: args.goal } : {}),
          ...(args.model ? { model: args.model } : {}),
          ...(args.conversation_id ? { conversation_id: args.conversation_id } : {}),
        });
      } catch (e) {
        return requestError(e);
      }
      const runId = created.run_id;
      if (args.wait === false) return json({ run_id: runId, status: created.status, agent: created.plugin, model: `${created.provider}:${created.model}` });
      // the client cancelling its request cancels the run
      const onAbort = () => void service.cancel(runId).catch(() => undefined);
      extra.signal.addEventListener('abort', onAbort, { once: true });
      const token = extra._meta?.progressToken;
      let n = 0;
      try {
        for await (const ev of service.events(runId, { signal: extra.signal })) {
          if (token === undefined) continue;
          const line = progressLine(ev);
          if (!line) continue;
          await extra
            .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++n, message: line } })
            .catch(() => undefined);
        }
        const final = await service.wait(runId);
        const s = summary(final);
        const text =
          final.status === 'completed'
            ? final.final_answer || `run ${runId} completed`
            : `run ${runId} ${final.status}: ${final.diagnosis?.summary ?? ''}${final.diagnosis?.detail ? `\n${final.diagnosis.detail}` : ''}`;
        return {
          content: [
            { type: 'text', text },
            ...artifactsOf(final).map((a) => ({
              type: 'resource_link' as const,
              uri: a.uri,
              name: a.path.replace(/^artifacts\//, ''),
              mimeType: a.mimeType,
              description: `${a.bytes} bytes, artifact of run ${runId}`,
            })),
          ],
          structuredContent: s,
          ...(final.status === 'completed' ? {} : { isError: true }),
        };
      } finally {
        extra.signal.removeEventListener('abort', onAbort);
      }
    },
  );

  server.registerTool(
    'get_run',
    { description: "A run's status, final answer, diagnosis and artifacts.", inputSchema: { run_id: z.string().min(1) }, annotations: { readOnlyHint: true } },
    async ({ run_id }) => {
      const s = await service.get(run_id).catch(() => null);
      if (!s) return { isError: true, content: [{ type: 'text', text: `run ${run_id} not found` }] };
      return json(summary(s));
    },
  );

  server.registerTool(
    'list_runs',
    {
      description: 'Recent runs, newest first.',
      inputSchema: {
        status: z.enum(RUN_STATUSES as unknown as [RunStatus, ...RunStatus[]]).optional(),
        agent: z.string().optional(),
        limit: z.number().int().min(1).max(200).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ status, agent, limit }) => {
      const { runs, total } = await service.list({ ...(status ? { status } : {}), ...(agent ? { plugin: agent } : {}), limit: limit ?? 20 });
      return json({
        total,
        runs: runs.map((r) => ({ run_id: r.run_id, status: r.status, agent: r.plugin, goal: r.goal, created_at: r.created_at, finished_at: r.finished_at })),
      });
    },
  );

  server.registerTool('cancel_run', { description: 'Cancel a queued or running run.', inputSchema: { run_id: z.string().min(1) } }, async ({ run_id }) => {
    try {
      const s = await service.cancel(run_id);
      return json({ run_id: s.run_id, status: s.status });
    } catch (e) {
      return requestError(e);
    }
  });

  server.registerResource(
    'run-artifact',
    new ResourceTemplate(`${ARTIFACT_URI_PREFIX}{run_id}/artifacts/{+path}`, {
      list: async () => {
        const { runs } = await service.list({ limit: 50 });
        return {
          resources: runs.flatMap((r) =>
            artifactsOf(r).map((a) => ({
              uri: a.uri,
              name: `${r.run_id}/${a.path}`,
              mimeType: a.mimeType,
              description: `${r.plugin} run ${r.run_id} (${r.status}), ${a.bytes} bytes`,
            })),
          ),
        };
      },
    }),
    { description: "A run's artifact (a file it wrote under artifacts/)" },
    async (uri, vars): Promise<ReadResourceResult> => {
      const runId = String(vars.run_id);
      const rel = decodeURIComponent(String(vars.path));
      const abs = await service.documentPath(runId, `artifacts/${rel}`);
      if (!abs) throw new Error(`no artifact ${JSON.stringify(rel)} in run ${runId}`);
      const mimeType = mimeOf(rel);
      const data = await readFile(abs);
      const text = extname(rel).toLowerCase() in TEXT_TYPES;
      return { contents: [text ? { uri: uri.href, mimeType, text: data.toString('utf8') } : { uri: uri.href, mimeType, blob: data.toString('base64') }] };
    },
  );
  return server;
}
