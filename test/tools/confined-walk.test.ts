import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkspacePathError } from '../../src/tools/confine-path.js';
import { resolveBeneath } from '../../src/tools/confined-walk.js';

let base: string;
let root: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rt-walk-'));
  root = join(base, 'root');
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  writeFileSync(join(root, 'a', 'b', 'f.txt'), 'inside');
  mkdirSync(join(base, 'host'));
  writeFileSync(join(base, 'host', 'f.txt'), 'HOST');
});
// rm(1): Node's rmSync cannot remove a tree deeper than PATH_MAX
afterEach(() => execFileSync('rm', ['-rf', base]));

/** Where `rel` leads below root, as names; the descriptors released. */
function names(rel: string, createDirs = false): { path: string; exists: boolean } {
  const r = resolveBeneath(root, rel, { createDirs, what: 'the root' });
  try {
    return { path: r.path.join('/'), exists: r.fd !== null };
  } finally {
    r.close();
  }
}

function refusal(rel: string): string {
  try {
    names(rel);
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspacePathError);
    return (e as WorkspacePathError).reason;
  }
  throw new Error(`${rel} was not refused`);
}

describe('resolveBeneath', () => {
  it('resolves plain names, `.` and `..` that stay inside, and says when the last name is missing', () => {
    expect(names('a/b/f.txt')).toEqual({ path: 'a/b/f.txt', exists: true });
    expect(names('./a/./b/../b/f.txt')).toEqual({ path: 'a/b/f.txt', exists: true });
    expect(names('a/b/new.txt')).toEqual({ path: 'a/b/new.txt', exists: false });
  });

  it('refuses `..` past the root, absolute paths, NUL bytes and names longer than a file system allows', () => {
    expect(refusal('../host/f.txt')).toMatch(/leads outside the root/);
    expect(refusal('a/../../host/f.txt')).toMatch(/leads outside the root/);
    expect(refusal(join(base, 'host', 'f.txt'))).toMatch(/absolute/);
    expect(refusal('a/\0/f.txt')).toMatch(/NUL/);
    expect(refusal(`a/${'x'.repeat(256)}`)).toMatch(/longer than 255 bytes/);
  });

  it('follows links by hand inside the root, and refuses one leading out, absolute or relative, however deep', () => {
    symlinkSync('b', join(root, 'a', 'rel'));
    symlinkSync(join(root, 'a', 'b'), join(root, 'abs'));
    expect(names('a/rel/f.txt').path).toBe('a/b/f.txt');
    expect(names('abs/f.txt').path).toBe('a/b/f.txt');
    symlinkSync(join(base, 'host'), join(root, 'a', 'out'));
    symlinkSync('../../host', join(root, 'a', 'up'));
    symlinkSync('up/f.txt', join(root, 'a', 'via'));
    expect(refusal('a/out/f.txt')).toMatch(/leads outside/);
    expect(refusal('a/up/f.txt')).toMatch(/leads outside/);
    expect(refusal('a/via')).toMatch(/leads outside/);
    // a dangling link inside: where a write would land
    symlinkSync('b/later.txt', join(root, 'a', 'dangling'));
    expect(names('a/dangling')).toEqual({ path: 'a/b/later.txt', exists: false });
  });

  it('refuses link loops and a file used as a folder', () => {
    symlinkSync('loop2', join(root, 'loop1'));
    symlinkSync('loop1', join(root, 'loop2'));
    expect(refusal('loop1/x')).toMatch(/too many levels/);
    expect(refusal('a/b/f.txt/x')).toMatch(/a\/b\/f.txt is not a folder/);
    expect(refusal('missing/x')).toMatch(/missing does not exist/);
  });

  it('makes missing folders when asked, never through a link leading out', () => {
    expect(names('n1/n2/x.txt', true)).toEqual({ path: 'n1/n2/x.txt', exists: false });
    symlinkSync(join(base, 'host'), join(root, 'h'));
    expect(() => names('h/made/x.txt', true)).toThrow(/leads outside/);
  });

  it('walks a path far longer than PATH_MAX, one name at a time', () => {
    const deep = Array.from({ length: 300 }, () => 'd'.repeat(20)).join('/');
    expect(names(`${deep}/x.txt`, true)).toEqual({ path: `${deep}/x.txt`, exists: false });
  });
});
