/**
 * DESIGN.md's layer table, enforced: each import under src/ must point at an allowed layer.
 * Uses the TypeScript parser so type-only imports (erased at runtime) are told apart:
 * plugins may see runtime's types only.
 */
import { dirname, join, normalize, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, readSource, sourceFiles, SRC } from './source-files.js';

type Layer =
  | 'events'
  | 'channels'
  | 'providers'
  | 'tools'
  | 'skills'
  | 'runtime'
  | 'plugins'
  | 'extensions'
  | 'mcp'
  | 'telemetry'
  | 'distributed'
  | 'triggers'
  | 'sandbox'
  | 'tenants'
  | 'server'
  | 'cli';

/**
 * layer → layers it may import at runtime; `typesOnly` → layers it may import for types only.
 * Two readings of the table, stated here so they can be argued with: server and cli are one row
 * (the front doors: `runtrail start` starts the server), and plugins may use the provider types
 * that runtime's plugin contract itself is written in (ChatMessage, ToolSpec for offline procedures).
 */
export const LAYERS: Record<Layer, { uses: Layer[]; typesOnly?: Layer[] }> = {
  events: { uses: [] },
  channels: { uses: ['events'] },
  providers: { uses: ['events'] },
  // round 3: the sandbox (policy, bubblewrap command, proxy) is used by tools and mcp, never the other way
  sandbox: { uses: ['events'] },
  tools: { uses: ['events', 'sandbox'] },
  skills: { uses: ['tools', 'events'] },
  runtime: { uses: ['events', 'providers', 'tools', 'skills', 'sandbox'] },
  plugins: { uses: ['tools', 'skills', 'events'], typesOnly: ['runtime', 'providers'] },
  // round 2 (DESIGN.md): the project folder, MCP, tracing, scale-out
  extensions: { uses: ['tools', 'skills', 'mcp', 'channels', 'events', 'sandbox'], typesOnly: ['runtime', 'providers'] },
  mcp: { uses: ['tools', 'events', 'sandbox'] },
  telemetry: { uses: ['events'], typesOnly: ['runtime'] },
  distributed: { uses: ['events'], typesOnly: ['runtime'] },
  // round 3: schedules and completion webhooks start and read runs through the run service's public
  // API (RunServiceApi, its observers, RunRequestError); the project's definitions are seen as types
  triggers: { uses: ['runtime', 'events'], typesOnly: ['extensions'] },
  // round 4: tenants, users, keys and the audit log; the scoped run store reads runs through the service's
  // API; the identity file is changed as the schedules' file is (triggers' LockedJsonFile)
  tenants: { uses: ['runtime', 'events', 'triggers'] },
  server: { uses: ['tenants', 'runtime', 'plugins', 'channels', 'events', 'extensions', 'mcp', 'telemetry', 'distributed', 'triggers', 'sandbox', 'cli'] },
  cli: { uses: ['tenants', 'runtime', 'plugins', 'channels', 'events', 'extensions', 'mcp', 'telemetry', 'distributed', 'triggers', 'sandbox', 'server'] },
};

function layerOf(relToSrc: string): Layer | null {
  const top = relToSrc.split('/')[0];
  return top in LAYERS ? (top as Layer) : null;
}

/** Violations of one file (path relative to src/, posix). */
export function layerViolations(file: string, source: string): string[] {
  const from = layerOf(file);
  if (!from) return [];
  const rule = LAYERS[from];
  const bad: string[] = [];
  for (const imp of importsOf(file, source)) {
    if (!imp.spec.startsWith('.')) continue;
    const target = relative(SRC, normalize(join(SRC, dirname(file), imp.spec)))
      .split(sep)
      .join('/');
    if (target.startsWith('..')) {
      bad.push(`${file} imports ${imp.spec}, outside src/`);
      continue;
    }
    const to = layerOf(target);
    if (to === from) continue;
    if (!to) {
      bad.push(`${file} (${from}) imports ${imp.spec}, which belongs to no layer`);
      continue;
    }
    if (rule.uses.includes(to)) continue;
    if (imp.typeOnly && rule.typesOnly?.includes(to)) continue;
    const allowed = [...rule.uses, ...(rule.typesOnly ?? []).map((l) => `${l} (types)`)].join(', ') || 'nothing of Runtrail';
    bad.push(`${file} (${from}) imports ${imp.spec}${imp.typeOnly ? ' (types)' : ''} from ${to}; ${from} may import ${allowed}`);
  }
  return bad;
}

describe('layers (DESIGN.md)', () => {
  it('every import under src/ respects the layer table', () => {
    const bad = sourceFiles().flatMap((f) => layerViolations(f, readSource(f)));
    expect(bad, bad.join('\n')).toEqual([]);
  });

  it('the check really fails on violations', () => {
    expect(layerViolations('events/x.ts', `import { RunService } from '../runtime/service/run-service.js';`)).toHaveLength(1);
    expect(layerViolations('channels/x.ts', `import type { Tool } from '../tools/tool.js';`)).toHaveLength(1);
    expect(layerViolations('tools/x.ts', `export * from '../runtime/storage/run-id.js';`)).toHaveLength(1);
    expect(layerViolations('runtime/x.ts', `const m = await import('../server/server.js');`)).toHaveLength(1);
    expect(layerViolations('plugins/x.ts', `import { createRun } from '../runtime/run/run-engine.js';`)).toHaveLength(1);
    expect(layerViolations('plugins/x.ts', `import { type A, b } from '../runtime/agent.js';`)).toHaveLength(1);
    expect(layerViolations('events/x.ts', `import x from '../../package.json';`)).toHaveLength(1);
    expect(layerViolations('plugins/x.ts', `import { OfflineProvider } from '../providers/offline-provider.js';`)).toHaveLength(1);
    expect(layerViolations('server/x.ts', `import { ScriptProvider } from '../providers/script-provider.js';`)).toHaveLength(1);
    expect(layerViolations('triggers/x.ts', `import { ExtensionRegistry } from '../extensions/extension-registry.js';`)).toHaveLength(1);
    expect(layerViolations('runtime/x.ts', `import { Scheduler } from '../triggers/scheduler.js';`)).toHaveLength(1);
  });

  it('allowed imports pass', () => {
    expect(layerViolations('plugins/x.ts', `import type { Agent } from '../runtime/agent.js';`)).toEqual([]);
    expect(layerViolations('plugins/x.ts', `import { type Agent } from '../runtime/agent.js';`)).toEqual([]);
    expect(layerViolations('server/x.ts', `import { SseAdapter } from '../channels/sse-adapter.js';`)).toEqual([]);
    expect(layerViolations('events/sub/x.ts', `import { a } from '../agent-event.js'; import { z } from 'zod';`)).toEqual([]);
    expect(layerViolations('index.ts', `export * from './runtime/service/run-service.js';`)).toEqual([]);
  });
});
