/**
 * What a sandboxed command's output says the sandbox refused: a write to a read-only path, or a host
 * the filtering proxy turned away. Found in the output so that a failed step says "the sandbox refused
 * this" (a `sandbox_denied` diagnosis naming the path or host) instead of leaving a mystery error.
 */

export interface SandboxDenial {
  kind: 'read_only_path' | 'host_refused';
  /** The path or host. */
  target: string;
}

/** `touch: cannot touch '/etc/x': Read-only file system`, `sh: 1: cannot create /etc/x: Read-only file system`, Python's `[Errno 30] Read-only file system: '/etc/x'`. */
const READ_ONLY = [
  /'([^'\n]+)': Read-only file system/,
  /cannot create ([^:\n]+): Read-only file system/,
  /Read-only file system: '([^'\n]+)'/,
  /EROFS: read-only file system, \w+ '([^'\n]+)'/,
  /(\/[^\s:'"]+): Read-only file system/,
];
/**
 * On a root server the sandbox's user is not root: a write to a system folder is refused by its owner
 * before the read-only mount is reached (`touch: cannot touch '/etc/x': Permission denied`). Only
 * paths in the sandbox's fixed system folders count: "Permission denied" in the workspace is the
 * run's own business.
 */
const PERMISSION_DENIED = [
  /'([^'\n]+)': Permission denied/,
  /cannot create ([^:\n]+): Permission denied/,
  /Permission denied: '([^'\n]+)'/,
  /EACCES: permission denied, \w+ '([^'\n]+)'/,
];
const SYSTEM_PATH = /^\/(?:[^/]+$|(?:etc|usr|bin|sbin|lib\w*|proc|sys|dev|boot|opt|var|srv|root|home|mnt|media|run|snap)(?:\/|$))/;
/** The proxy's own refusal line (it is also the body of its 403 answer). */
export const PROXY_REFUSAL_PREFIX = 'runtrail sandbox refused';
const HOST_REFUSED = /runtrail sandbox refused (?:a connection to )?([A-Za-z0-9.:[\]-]+)/;

export function findSandboxDenial(output: string): SandboxDenial | null {
  const host = HOST_REFUSED.exec(output);
  if (host) return { kind: 'host_refused', target: host[1] };
  for (const re of READ_ONLY) {
    const m = re.exec(output);
    if (m) return { kind: 'read_only_path', target: m[1].trim() };
  }
  for (const re of PERMISSION_DENIED) {
    const m = re.exec(output);
    if (m && SYSTEM_PATH.test(m[1].trim())) return { kind: 'read_only_path', target: m[1].trim() };
  }
  return null;
}

/** The diagnosis summary and hint for a denial. */
export function describeDenial(d: SandboxDenial): { summary: string; hint: string } {
  return d.kind === 'read_only_path'
    ? {
        summary: `the sandbox refused a write to ${d.target}: only the run's workspace (and paths the operator made writable) can be written`,
        hint: 'Write inside the workspace; a path outside it needs sandbox.write in the agent or config.json.',
      }
    : {
        summary: `the sandbox refused a connection to ${d.target}: it is not on the network allowlist, or it resolves to a loopback, link-local or private address`,
        hint: 'Hosts are opened with sandbox.network: { allow: [...] } in the agent or config.json.',
      };
}
