/** manifest.json: the run's public documents; private runtime files stay out. */
import { extname } from 'node:path';
import type { RunStatus } from '../../events/agent-event.js';
import type { ArtifactContract } from '../agent.js';
import type { PublicDocument } from '../run-service-types.js';

export interface RunManifest {
  run_id: string;
  status: RunStatus;
  plugin: { name: string; version: string };
  skill: { name: string; version: string } | null;
  provider: string;
  model: string;
  created_at: string;
  finished_at: string | null;
  documents: PublicDocument[];
}

const TYPE_BY_EXT: Record<string, string> = { '.json': 'json', '.md': 'markdown', '.csv': 'csv', '.txt': 'text' };

/** Public documents are the artifacts; contract entries give their audience and sensitivity. */
export function publicDocuments(artifacts: Array<{ path: string; bytes: number }>, contract: ArtifactContract[]): PublicDocument[] {
  return artifacts.map((a) => {
    const c = contract.find((x) => x.path === a.path);
    return {
      path: `artifacts/${a.path}`,
      audience: c?.audience ?? 'user',
      sensitivity: c?.sensitivity ?? 'internal',
      type: c?.type ?? TYPE_BY_EXT[extname(a.path).toLowerCase()] ?? 'file',
      description: c?.description ?? 'file written by the run',
      bytes: a.bytes,
    };
  });
}
