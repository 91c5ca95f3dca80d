import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_LIMITS, resolveSandboxPolicy, sandboxSummary } from '../../src/sandbox/sandbox-policy.js';
import { describeUnsupported, sandboxSupport } from '../../src/sandbox/sandbox-support.js';
import { sandboxStartLine } from '../../src/sandbox/sandbox-description.js';

describe('resolveSandboxPolicy: the agent asks, the operator bounds', () => {
  it('is on with no network and the default limits when nobody says anything', () => {
    expect(resolveSandboxPolicy(undefined, undefined)).toEqual({
      mode: 'on',
      read: [],
      write: [],
      network: { mode: 'none' },
      env: [],
      limits: { ...DEFAULT_SANDBOX_LIMITS },
      elevated: 'off',
      notes: [],
    });
  });

  it('is off only by the operator', () => {
    expect(resolveSandboxPolicy({ mode: 'off' }, { network: 'host' })).toEqual({ mode: 'off' });
  });

  it('gives the host network only when the operator allows it, and says so when it does not', () => {
    expect(resolveSandboxPolicy({ network: 'host' }, { network: 'host' })).toMatchObject({ network: { mode: 'host' } });
    const p = resolveSandboxPolicy(undefined, { network: 'host' });
    expect(p).toMatchObject({ network: { mode: 'none' } });
    expect(p.mode === 'on' && p.notes.join()).toMatch(/network: host needs the operator/);
  });

  it("widens the allowlist with the operator's hosts and narrows it to none when the operator says none", () => {
    expect(resolveSandboxPolicy({ network: { allow: ['b.example'] } }, { network: { allow: ['a.example:443'] } })).toMatchObject({
      network: { mode: 'allow', allow: ['a.example:443', 'b.example'] },
    });
    expect(resolveSandboxPolicy({ network: 'none' }, { network: { allow: ['a.example'] } })).toMatchObject({ network: { mode: 'none' } });
  });

  it("caps the agent's limits at the operator's (or the defaults) and lets the operator raise them", () => {
    const p = resolveSandboxPolicy({ limits: { processes: 2048 } }, { limits: { processes: 4096, memory_mb: 64 } });
    expect(p).toMatchObject({ limits: { processes: 2048, memory_mb: 64 } });
    const capped = resolveSandboxPolicy(undefined, { limits: { processes: 5000 } });
    expect(capped).toMatchObject({ limits: { processes: 1024 } });
  });

  it("lets an agent list paths inside the project or the operator's, nothing else", () => {
    const p = resolveSandboxPolicy(
      { read: ['/opt/data'], write: ['/srv/cache'] },
      { read: ['docs', '/opt/data/sets', '/root', '../x', '.runtrail/runs'], write: ['out', '/', '/srv/cache/npm'] },
    );
    expect(p).toMatchObject({ read: ['docs', '/opt/data/sets', '/opt/data'], write: ['out', '/srv/cache/npm', '/srv/cache'] });
    const notes = p.mode === 'on' ? p.notes.join('\n') : '';
    for (const refused of ['read /root', 'read ../x', 'read .runtrail/runs', 'write /:']) expect(notes).toContain(refused);
  });

  it('grants a secret-looking variable only by the operator', () => {
    const p = resolveSandboxPolicy(undefined, { env: ['OPENAI_API_KEY', 'NODE_ENV'] });
    expect(p).toMatchObject({ env: ['NODE_ENV'] });
    expect(resolveSandboxPolicy({ env: ['OPENAI_API_KEY'] }, { env: ['OPENAI_API_KEY'] })).toMatchObject({ env: ['OPENAI_API_KEY'] });
  });

  it('summarises a step as { mode, network }', () => {
    expect(sandboxSummary(resolveSandboxPolicy(undefined, { network: { allow: ['a.example'] } }))).toEqual({ mode: 'on', network: 'allow a.example' });
    expect(sandboxSummary({ mode: 'off' })).toEqual({ mode: 'off', network: 'host' });
    expect(sandboxSummary(null)).toEqual({ mode: 'elevated', network: 'host' });
  });
});

describe('sandboxSupport', () => {
  it('names what to install when bubblewrap is missing', () => {
    const s = sandboxSupport({ bwrap: '/nonexistent/bwrap' });
    expect(s.ok).toBe(false);
    if (s.ok) return;
    expect(describeUnsupported(s)).toMatch(/bubblewrap is not installed \(no \/nonexistent\/bwrap\).*apt-get install bubblewrap.*mode": "off"/);
  });
});

describe('sandboxStartLine (printed by the server at start)', () => {
  it('says SANDBOX OFF when the operator turned it off, else how commands are sandboxed', () => {
    expect(sandboxStartLine({ mode: 'off' })).toMatch(/^SANDBOX OFF: config\.json sets sandbox\.mode "off"/);
    if (sandboxSupport().ok)
      expect(sandboxStartLine({ elevated: 'ask' })).toMatch(/^sandbox on \(bubblewrap\): network none; processes ≤ 1024 by .*; elevated ask$/);
  });
});
