import type { ReadBounds } from './confined-files.js';

/**
 * What the file tools need of a run's folder (structurally the runtime's WorkspaceAccess): every path
 * resolved and confined by its owner; relative paths are relative to the run folder.
 */
export interface FileAccess {
  /** Absolute path of the run folder. */
  readonly root: string;
  /** Throws when `p` is outside the read roots. */
  resolveRead(p: string): string;
  /** Throws when `p` is outside the write roots. */
  resolveWrite(p: string): string;
  /** The first bytes of a regular file inside the read roots, opened beneath its root, and its size; throws WorkspacePathError. */
  readFile(p: string, bounds?: ReadBounds): Promise<{ data: Buffer; size: number }>;
  /** `relPath` is relative to artifacts/. */
  writeArtifact(relPath: string, content: string | Uint8Array): Promise<{ path: string; bytes: number }>;
  /** What writeArtifact would leave on the disk (nothing is written): path under artifacts/, size, SHA-256. */
  artifactDigest?(relPath: string, content: string | Uint8Array): { path: string; bytes: number; sha256: string };
  /** Size and SHA-256 of artifacts/<path> on the disk, or null. */
  artifactOnDisk?(path: string): Promise<{ bytes: number; sha256: string } | null>;
  listArtifacts(): Promise<Array<{ path: string; bytes: number }>>;
}

/** The part of an artifact contract the file tools read. */
export interface ArtifactRequirement {
  path: string;
  required: boolean;
}
