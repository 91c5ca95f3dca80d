import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkspacePathError } from '../../src/tools/confine-path.js';
import { listFilesBeneath, readRegularFile, replaceFileBeneath } from '../../src/tools/confined-files.js';

let base: string;
let root: string;
let server: Server | null = null;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rt-cfiles-'));
  root = join(base, 'run');
  mkdirSync(join(root, 'artifacts'), { recursive: true });
  mkdirSync(join(base, 'host'));
  writeFileSync(join(base, 'host', 'secret.txt'), 'HOST-SECRET');
});
afterEach(() => {
  server?.close();
  server = null;
  rmSync(base, { recursive: true, force: true });
});

const at = (rel: string) => ({ root, rel, what: 'the run folder' });

async function refusal(p: Promise<unknown>): Promise<WorkspacePathError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspacePathError);
    return e as WorkspacePathError;
  }
  throw new Error('not refused');
}

describe('readRegularFile', () => {
  it('reads a regular file, its first maxBytes when larger, with its whole size', async () => {
    writeFileSync(join(root, 'artifacts', 'a.txt'), 'hello world');
    expect((await readRegularFile(at('artifacts/a.txt'))).data.toString()).toBe('hello world');
    const part = await readRegularFile(at('artifacts/a.txt'), { maxBytes: 5, timeoutMs: 1000 });
    expect(part).toMatchObject({ size: 11 });
    expect(part.data.toString()).toBe('hello');
  });

  it('refuses a FIFO at once, without opening it (four at a time leave the file-system threads free)', async () => {
    for (const i of [1, 2, 3, 4]) execFileSync('mkfifo', [join(root, 'artifacts', `p${i}`)]);
    const refused = await Promise.all([1, 2, 3, 4].map((i) => refusal(readRegularFile(at(`artifacts/p${i}`)))));
    for (const e of refused) {
      expect(e.refusal).toBe('not_a_file');
      expect(e.message).toMatch(/artifacts\/p\d.*is a FIFO, not a regular file/);
    }
    // libuv has four threads: had any of the reads waited on its FIFO, this read would wait behind it
    writeFileSync(join(base, 'other.txt'), 'free');
    expect(await readFile(join(base, 'other.txt'), 'utf8')).toBe('free');
  });

  it('refuses a device node and a socket by kind, naming the path', async () => {
    execFileSync('mknod', [join(root, 'artifacts', 'null'), 'c', '1', '3']);
    expect((await refusal(readRegularFile(at('artifacts/null')))).message).toMatch(/artifacts\/null.*is a device/);
    server = createServer();
    await new Promise<void>((r) => server!.listen(join(root, 'artifacts', 'sock'), r));
    expect((await refusal(readRegularFile(at('artifacts/sock')))).message).toMatch(/artifacts\/sock.*is a socket/);
    expect((await refusal(readRegularFile(at('artifacts')))).message).toMatch(/is a folder/);
  });

  it('never reads a host file through a link, at the file or at a folder on the way, absolute or relative', async () => {
    symlinkSync(join(base, 'host', 'secret.txt'), join(root, 'artifacts', 'abs.txt'));
    symlinkSync('../../host/secret.txt', join(root, 'artifacts', 'rel.txt'));
    symlinkSync(join(base, 'host'), join(root, 'artifacts', 'dir'));
    for (const rel of ['artifacts/abs.txt', 'artifacts/rel.txt', 'artifacts/dir/secret.txt', 'artifacts/../../host/secret.txt']) {
      const e = await refusal(readRegularFile(at(rel)));
      expect(e.message).toMatch(/leads outside the run folder/);
      expect(e.message).not.toContain('HOST-SECRET');
    }
  });

  it('applies a narrower scope to the path as resolved, links included', async () => {
    mkdirSync(join(root, 'runtime'));
    writeFileSync(join(root, 'runtime', 'private.json'), '{}');
    symlinkSync('../runtime/private.json', join(root, 'artifacts', 'peek.json'));
    const allow = (names: readonly string[]) => (names[0] === 'artifacts' ? null : 'outside artifacts/');
    expect((await refusal(readRegularFile({ ...at('artifacts/peek.json'), allow }))).message).toMatch(/outside artifacts\//);
  });
});

describe('replaceFileBeneath', () => {
  it('makes the folders, writes through a new file renamed into place, and leaves no temp file', async () => {
    expect(await replaceFileBeneath(at('artifacts/x/y/out.md'), Buffer.from('one'))).toEqual(['artifacts', 'x', 'y', 'out.md']);
    await replaceFileBeneath(at('artifacts/x/y/out.md'), Buffer.from('two'));
    expect(readFileSync(join(root, 'artifacts', 'x', 'y', 'out.md'), 'utf8')).toBe('two');
    expect(readdirSync(join(root, 'artifacts', 'x', 'y'))).toEqual(['out.md']);
  });

  it('replaces a hard link to a host file instead of writing through it', async () => {
    linkSync(join(base, 'host', 'secret.txt'), join(root, 'artifacts', 'linked.txt'));
    await replaceFileBeneath(at('artifacts/linked.txt'), Buffer.from('run data'));
    expect(readFileSync(join(base, 'host', 'secret.txt'), 'utf8')).toBe('HOST-SECRET');
    expect(readFileSync(join(root, 'artifacts', 'linked.txt'), 'utf8')).toBe('run data');
  });

  it('never writes on the host through a link, dangling or not, and refuses a folder at the name', async () => {
    symlinkSync(join(base, 'host', 'planted.txt'), join(root, 'artifacts', 'dangling.txt'));
    symlinkSync(join(base, 'host'), join(root, 'artifacts', 'dir'));
    for (const rel of ['artifacts/dangling.txt', 'artifacts/dir/new.txt', 'artifacts/dir/secret.txt']) {
      expect((await refusal(replaceFileBeneath(at(rel), Buffer.from('pwned')))).message).toMatch(/leads outside/);
    }
    expect(readdirSync(join(base, 'host'))).toEqual(['secret.txt']);
    expect(readFileSync(join(base, 'host', 'secret.txt'), 'utf8')).toBe('HOST-SECRET');
    mkdirSync(join(root, 'artifacts', 'folder'));
    expect((await refusal(replaceFileBeneath(at('artifacts/folder'), Buffer.from('x')))).message).toMatch(/is a folder/);
  });
});

describe('listFilesBeneath', () => {
  it('lists regular files with sizes; links, FIFOs and temp files are left out; too many entries is an error', async () => {
    mkdirSync(join(root, 'artifacts', 'sub'));
    writeFileSync(join(root, 'artifacts', 'sub', 'b.txt'), 'bb');
    writeFileSync(join(root, 'artifacts', 'a.txt'), 'a');
    writeFileSync(join(root, 'artifacts', '.runtrail-tmp-1-1'), 'half');
    symlinkSync(join(base, 'host'), join(root, 'artifacts', 'host'));
    symlinkSync(join(base, 'host', 'secret.txt'), join(root, 'artifacts', 'secret.txt'));
    execFileSync('mkfifo', [join(root, 'artifacts', 'fifo')]);
    expect(await listFilesBeneath(at('artifacts'))).toEqual([
      { path: 'a.txt', bytes: 1 },
      { path: 'sub/b.txt', bytes: 2 },
    ]);
    expect(await listFilesBeneath(at('missing'))).toEqual([]);
    await expect(listFilesBeneath(at('artifacts'), 3)).rejects.toThrow(/holds more than 3 entries/);
  });

  it('does not follow artifacts/ itself when it was swapped for a link to a host folder', async () => {
    rmSync(join(root, 'artifacts'), { recursive: true });
    symlinkSync(join(base, 'host'), join(root, 'artifacts'));
    await expect(listFilesBeneath(at('artifacts'))).rejects.toThrow(/leads outside the run folder/);
  });
});
