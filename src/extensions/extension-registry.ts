/**
 * One registry of everything a run may use: agents (builtins, code plugins' agents, Markdown agents),
 * tools, skills and config, from three layers — the builtins, the user's `~/.runtrail/` and the
 * project's `<DIR>/.runtrail/`. A later layer wins; a clash is a warning naming both files. One broken
 * file is a problem in the list, never a reason the others do not load.
 *
 * Just over 400 lines: the three layers are loaded and merged by the same rules, kept side by side.
 */
import { didYouMean } from '../events/did-you-mean.js';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { Agent, DefinitionSource } from '../runtime/agent.js';
import type { RunLimits } from '../runtime/run-service-types.js';
import type { CaptureSettings } from '../runtime/model-calls/capture-settings.js';
import type { OperatorSandboxSettings } from '../sandbox/sandbox-policy.js';
import { sandboxPathProblems, type PinContext } from '../sandbox/sandbox-paths.js';
import { listSkills, loadSkill } from '../skills/skill-loader.js';
import { checkSchema, formatSchemaPath } from '../tools/schema.js';
import { CONFIG_SCHEMA } from './agent-frontmatter-schema.js';
import { agentToolNames, compileAgent } from './agent-plugin.js';
import { loadCodePlugin, resolvePluginModule } from './code-plugin.js';
import type { DefinitionProblem } from './definition-problem.js';
import { parseAgentFile, type AgentDefinition } from './markdown-agent.js';
import { parseMcpConfig, type McpServerConfig } from '../mcp/mcp-config.js';
import { preloadMcpClient, sharedMcpPool, type McpServerPool } from '../mcp/mcp-server-pool.js';
import { isMcpToolEntry } from '../mcp/mcp-tool-name.js';
import { resolveAgentMcp } from './agent-mcp.js';
import { GRANT_ONLY_TOOLS, ToolCatalog, pluginToolFactory } from './tool-catalog.js';
import type { ChannelDefinition } from '../channels/channel-types.js';
import { channelAgentProblems, parseChannelsConfig, type ConfiguredChannel } from './channel-config.js';

// the registry holds agents of many input types; each validates its own input
// biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
type AnyAgent = Agent<any>; // any: see above

export interface ProjectConfig {
  model?: string;
  limits?: Partial<RunLimits>;
  /** How far a request over HTTP may raise an agent's limits. */
  request_limits?: Partial<RunLimits>;
  /** The HTTP server's timeouts and connection caps, as config.json names them (seconds). */
  http?: Record<string, number>;
  /** What each client may keep in <dataDir>/uploads, as config.json names it. */
  uploads?: Record<string, number>;
  disable?: string[];
  plugins?: string[];
  capture?: CaptureSettings;
  /** The operator's sandbox settings (mode, elevated, bounds of the agents' `sandbox:`). */
  sandbox?: OperatorSandboxSettings;
  /** whether runs whose process died are resumed, and how many times at most */
  durability?: { resume?: boolean; max_resumes?: number };
  /** completion webhooks and schedule defaults, as written (src/triggers checks them) */
  webhooks?: Record<string, unknown>;
  schedules?: Record<string, unknown>;
}

export interface ExtensionRegistryOptions {
  /** The project folder (definitions in `<projectDir>/.runtrail/`). */
  projectDir: string;
  /** The user's home; its `.runtrail/` is the user layer. Absent: no user layer. */
  homeDir?: string;
  /** The builtin agents: the first layer, loaded like anyone's. */
  builtins: AnyAgent[];
  /** The package's own skills folder (the builtin layer's skills). */
  builtinSkillsDir: string;
  /** Where `${VAR}` in mcp.json expands from; default process.env. */
  env?: Record<string, string | undefined>;
  /** The MCP servers' connections; default the process-wide pool. */
  mcpPool?: McpServerPool;
  /** The builtin chat channel types (telegram, slack, feishu): loaded like a code plugin's. */
  builtinChannels?: ChannelDefinition[];
}

export interface AgentEntry {
  agent: AnyAgent;
  source: DefinitionSource;
  /** The Markdown definition, for agents from files. */
  definition?: AgentDefinition;
}

interface Layer {
  kind: 'user' | 'project';
  root: string;
  /** How its files are shown: `.runtrail` (relative to the project) or `~/.runtrail`. */
  shown: string;
  /** config.json's `plugins` of this layer (paths relative to its folder, or npm package names). */
  plugins: string[];
}

const CODE_PLUGIN_FILE = /\.(?:js|mjs|ts)$/;

function listFiles(dir: string, match: RegExp): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && match.test(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

export class ExtensionRegistry {
  readonly projectDir: string;
  readonly problems: DefinitionProblem[] = [];
  /** Where skills are looked up, first wins: project, user, builtin. */
  readonly skillDirs: string[];
  readonly config: ProjectConfig = {};
  readonly tools = new ToolCatalog();
  /** MCP servers of mcp.json (user, then project: a later layer wins), by name. */
  readonly mcpServers = new Map<string, McpServerConfig>();
  readonly mcpPool: McpServerPool;
  /** Chat channel types by name (builtins, then code plugins'), with where each comes from. */
  readonly channelTypes = new Map<string, { definition: ChannelDefinition; source: string }>();
  /** The channels of channels.json (user, then project: a later layer wins), by name. */
  readonly channels = new Map<string, ConfiguredChannel>();
  private readonly agents = new Map<string, AgentEntry>();
  /** Agents whose file is there but did not load, by name: why (`unavailable`). */
  private readonly failedAgents = new Map<string, string>();
  private readonly layers: Layer[];

  private constructor(private readonly opts: ExtensionRegistryOptions) {
    this.projectDir = resolve(opts.projectDir);
    const projectRoot = join(this.projectDir, '.runtrail');
    const userRoot = opts.homeDir ? join(resolve(opts.homeDir), '.runtrail') : null;
    this.layers = [
      ...(userRoot && userRoot !== projectRoot ? [{ kind: 'user' as const, root: userRoot, shown: '~/.runtrail', plugins: [] }] : []),
      { kind: 'project', root: projectRoot, shown: '.runtrail', plugins: [] },
    ];
    this.skillDirs = [...[...this.layers].reverse().map((l) => join(l.root, 'skills')), resolve(opts.builtinSkillsDir)];
    this.mcpPool = opts.mcpPool ?? sharedMcpPool();
  }

  static async load(opts: ExtensionRegistryOptions): Promise<ExtensionRegistry> {
    const r = new ExtensionRegistry(opts);
    await r.loadAll();
    return r;
  }

  /** Where the sandbox paths of this project's definitions resolve, and what they may not reach. */
  private pinContext(): PinContext {
    return { projectDir: this.projectDir, protectedDirs: [join(this.projectDir, '.runtrail')] };
  }

  /** A file as the user knows it. */
  private display(layer: Layer, abs: string): string {
    const rel = relative(layer.root, abs).split(sep).join('/');
    return `${layer.shown}/${rel}`;
  }

  private problem(file: string, message: string, field?: string, level: DefinitionProblem['level'] = 'error'): void {
    this.problems.push({ file, ...(field ? { field } : {}), message, level });
  }

  private async loadAll(): Promise<void> {
    for (const a of this.opts.builtins) this.agents.set(a.name, { agent: a, source: { kind: 'builtin' } });
    for (const layer of this.layers) this.loadConfig(layer);
    for (const layer of this.layers) this.loadMcp(layer);
    for (const c of this.opts.builtinChannels ?? []) this.channelTypes.set(c.name, { definition: c, source: 'builtin' });
    for (const layer of this.layers) await this.loadCodePlugins(layer);
    for (const layer of this.layers) this.loadChannels(layer);
    await this.checkSkills();
    for (const layer of this.layers) await this.loadAgentFiles(layer);
    this.applyDisable();
    this.checkSubagents();
    for (const c of this.channels.values()) this.problems.push(...channelAgentProblems(c, this.names()));
  }

  /** A layer's JSON file (config.json, mcp.json) as parsed; null when it is missing or not JSON (a problem says so). */
  private readLayerJson(layer: Layer, name: string): { shown: string; raw: unknown } | null {
    const file = join(layer.root, name);
    if (!existsSync(file)) return null;
    const shown = this.display(layer, file);
    try {
      return { shown, raw: JSON.parse(readFileSync(file, 'utf8')) as unknown };
    } catch (e) {
      this.problem(shown, `is not valid JSON: ${(e as Error).message}`);
      return null;
    }
  }

  private loadConfig(layer: Layer): void {
    const read = this.readLayerJson(layer, 'config.json');
    if (!read) return;
    const { shown, raw } = read;
    const c = checkSchema<ProjectConfig>(CONFIG_SCHEMA, raw);
    if (!c.ok) {
      for (const i of c.issues) this.problem(shown, withValue(i.message, raw, i.path), i.path.length ? formatSchemaPath(i.path) : undefined);
      return;
    }
    const cfg = c.value;
    if (cfg.model) this.config.model = cfg.model;
    if (cfg.limits) this.config.limits = { ...this.config.limits, ...cfg.limits };
    if (cfg.capture) this.config.capture = { ...this.config.capture, ...cfg.capture };
    if (cfg.sandbox) {
      // relative paths are the project's; none may reach .runtrail (the config, the runs) or hold it
      for (const p of sandboxPathProblems(cfg.sandbox, this.pinContext())) this.problem(shown, p.message, p.field);
      this.config.sandbox = { ...this.config.sandbox, ...cfg.sandbox };
    }
    if (cfg.durability) this.config.durability = { ...this.config.durability, ...cfg.durability };
    if (cfg.request_limits) this.config.request_limits = { ...this.config.request_limits, ...cfg.request_limits };
    if (cfg.http) this.config.http = { ...this.config.http, ...cfg.http };
    if (cfg.uploads) this.config.uploads = { ...this.config.uploads, ...cfg.uploads };
    if (cfg.disable) this.config.disable = [...(this.config.disable ?? []), ...cfg.disable];
    // the project's keys over the user's, one level deep (an allow list is replaced, not merged)
    if (cfg.webhooks) this.config.webhooks = { ...this.config.webhooks, ...cfg.webhooks };
    if (cfg.schedules) this.config.schedules = { ...this.config.schedules, ...cfg.schedules };
    layer.plugins = cfg.plugins ?? [];
  }

  /** mcp.json of a layer, in the `.mcp.json` format; a server of a later layer overrides (with a warning). */
  private loadMcp(layer: Layer): void {
    const read = this.readLayerJson(layer, 'mcp.json');
    if (!read) return;
    const { shown, raw } = read;
    const r = parseMcpConfig(raw, { file: shown, env: this.opts.env ?? process.env, baseDir: this.projectDir });
    this.problems.push(...r.problems);
    if (r.servers.length) preloadMcpClient();
    for (const s of r.servers) {
      const had = this.mcpServers.get(s.name);
      if (had) this.problem(shown, `MCP server "${s.name}" overrides the one in ${had.file}`, `mcpServers.${s.name}`, 'warning');
      this.mcpServers.set(s.name, s);
    }
  }

  private async loadCodePlugins(layer: Layer): Promise<void> {
    const dir = join(layer.root, 'plugins');
    const specs: Array<{ path: string; shown: string }> = listFiles(dir, CODE_PLUGIN_FILE).map((f) => ({
      path: join(dir, f),
      shown: this.display(layer, join(dir, f)),
    }));
    for (const spec of layer.plugins) {
      const m = resolvePluginModule(spec, layer.root, this.projectDir);
      if (!m.ok) this.problem(this.display(layer, join(layer.root, 'config.json')), m.message, 'plugins');
      else specs.push({ path: m.path, shown: spec.startsWith('.') || spec.startsWith('/') ? this.display(layer, m.path) : spec });
    }
    for (const { path, shown } of specs) {
      const r = await loadCodePlugin(path, shown);
      this.problems.push(...r.problems);
      if (!r.ok) continue;
      for (const t of r.plugin.tools) {
        const had = this.tools.get(t.name);
        if (had?.source === 'builtin') {
          this.problem(shown, `clashes with the builtin tool "${t.name}"; the plugin's tool is not loaded (rename it)`, `tools (${t.name})`);
          continue;
        }
        if (had) this.problem(shown, `tool "${t.name}" is also defined in ${had.source}; ${shown} wins`, `tools (${t.name})`, 'warning');
        this.tools.set(t.name, { factory: pluginToolFactory(t), source: shown });
      }
      for (const c of r.plugin.channels) {
        const had = this.channelTypes.get(c.name);
        if (had?.source === 'builtin') {
          this.problem(shown, `clashes with the builtin channel "${c.name}"; the plugin's channel is not loaded (rename it)`, `channels (${c.name})`);
          continue;
        }
        if (had) this.problem(shown, `channel "${c.name}" is also defined in ${had.source}; ${shown} wins`, `channels (${c.name})`, 'warning');
        this.channelTypes.set(c.name, { definition: c, source: shown });
      }
      for (const a of r.plugin.agents) this.addAgent({ ...a, source: { kind: layer.kind, file: shown } }, { kind: layer.kind, file: shown }, layer);
    }
  }

  /** channels.json of a layer; a channel of a later layer overrides (with a warning). */
  private loadChannels(layer: Layer): void {
    const read = this.readLayerJson(layer, 'channels.json');
    if (!read) return;
    const types = new Map([...this.channelTypes].map(([k, v]) => [k, v.definition]));
    const r = parseChannelsConfig(read.raw, { file: read.shown, env: this.opts.env ?? process.env, types });
    this.problems.push(...r.problems);
    for (const c of r.channels) {
      const had = this.channels.get(c.name);
      if (had) this.problem(read.shown, `channel "${c.name}" overrides the one in ${had.file}`, c.name, 'warning');
      this.channels.set(c.name, c);
    }
  }

  /** Skill folders of the user and the project: their problems are the user's to see. */
  private async checkSkills(): Promise<void> {
    for (const layer of this.layers) {
      const dir = join(layer.root, 'skills');
      if (!existsSync(dir)) continue;
      const { skills, errors } = await listSkills(dir);
      for (const e of errors) this.problem(this.display(layer, join(dir, e.name)), e.message.replace(/^.*?SKILL\.md: /, ''));
      for (const s of skills)
        for (const w of s.warnings) this.problem(this.display(layer, join(s.dir, 'SKILL.md')), w.replace(/^.*?SKILL\.md: /, ''), undefined, 'warning');
    }
  }

  private async loadAgentFiles(layer: Layer): Promise<void> {
    const dir = join(layer.root, 'agents');
    for (const f of listFiles(dir, /\.md$/i)) {
      const file = join(dir, f);
      const shown = this.display(layer, file);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (e) {
        this.problem(shown, `cannot be read: ${(e as Error).message}`);
        continue;
      }
      const before = this.problems.length;
      const stem = f.replace(/\.md$/i, '');
      const parsed = parseAgentFile(file, text, shown);
      if (!parsed.ok) {
        this.problems.push(...parsed.problems);
        // the names it uses are checked too, so one pass shows every problem of the file
        if (parsed.references) {
          await this.checkReferences(parsed.references, shown);
          this.checkServerNames(parsed.references.mcpServers ?? [], shown);
        }
        this.noteFailed([stem, parsed.references?.name ?? stem], shown, before);
        continue;
      }
      this.problems.push(...parsed.warnings);
      for (const p of sandboxPathProblems(parsed.agent.sandbox, this.pinContext())) this.problem(shown, p.message, p.field);
      const mcp = resolveAgentMcp(parsed.agent, this.mcpServers, { file: shown, env: this.opts.env ?? process.env, baseDir: this.projectDir });
      this.problems.push(...mcp.problems);
      const ownErrors = this.problems.slice(before).some((p) => p.level === 'error' && p.file === shown);
      if (!(await this.checkReferences(parsed.agent, shown)) || mcp.problems.some((p) => p.level === 'error') || ownErrors) {
        this.noteFailed([stem, parsed.agent.name], shown, before);
        continue;
      }
      const source: DefinitionSource = { kind: layer.kind, file: shown };
      this.addAgent(compileAgent(parsed.agent, this.tools, source, { servers: mcp.servers, pool: this.mcpPool }), source, layer, parsed.agent);
    }
  }

  /** An agent file that did not load: its name (and its file's stem) answer `unavailable` with its errors. */
  private noteFailed(names: string[], shown: string, firstProblem: number): void {
    const errors = this.problems.slice(firstProblem).filter((p) => p.level === 'error' && p.file === shown);
    const why = `${shown} failed to load: ${errors.map((p) => `${p.field ? `${p.field}: ` : ''}${p.message}`).join('; ') || 'see runtrail validate'}`;
    for (const n of names) if (!this.failedAgents.has(n)) this.failedAgents.set(n, why);
  }

  /** Tools and skills an agent names must exist; returns false (with problems) when one does not. */
  private async checkReferences(def: Pick<AgentDefinition, 'tools' | 'skills'>, shown: string): Promise<boolean> {
    let ok = true;
    for (const t of agentToolNames(def)) {
      if (this.tools.has(t) || isMcpToolEntry(t)) continue; // mcp__ entries: resolveAgentMcp
      ok = false;
      const offer = this.tools.names().filter((n) => !GRANT_ONLY_TOOLS.includes(n) || def.tools.includes(n));
      this.problem(shown, `unknown tool "${t}"${didYouMean(t, offer)} (available: ${offer.join(', ')})`, 'tools');
    }
    let skillNames: string[] | null = null;
    for (const s of def.skills) {
      const r = await loadSkill(this.skillDirs, s);
      if (!r.ok) {
        ok = false;
        skillNames ??= await this.skillNames();
        this.problem(
          shown,
          r.code === 'not_found'
            ? `unknown skill "${s}"${didYouMean(s, skillNames)} (looked in ${this.skillDirs.join(', ')})`
            : `skill "${s}" cannot be loaded: ${r.message}`,
          'skills',
        );
      }
    }
    return ok;
  }

  /** MCP servers a file that did not parse names by name: each must be in mcp.json (as resolveAgentMcp checks a valid file's). */
  private checkServerNames(names: string[], shown: string): void {
    const known = [...this.mcpServers.keys()].sort();
    for (const entry of names) {
      if (this.mcpServers.has(entry)) continue;
      this.problem(
        shown,
        `unknown MCP server "${entry}"${didYouMean(entry, known)} (${known.length ? `configured: ${known.join(', ')}` : 'none is configured'}; define it in .runtrail/mcp.json or inline)`,
        'mcpServers',
      );
    }
  }

  /** Every skill name of the skill folders (for suggestions). */
  private async skillNames(): Promise<string[]> {
    const { skills, errors } = await listSkills(this.skillDirs);
    return [...skills.map((s) => s.manifest.name), ...errors.map((e) => e.name)];
  }

  private addAgent(agent: AnyAgent, source: DefinitionSource, layer: Layer, definition?: AgentDefinition): void {
    const had = this.agents.get(agent.name);
    if (had) {
      const where = had.source.file ?? 'the builtins';
      if (had.source.kind === source.kind) {
        // two definitions in one layer: neither is the user's intent, the first (by file order) stays
        this.problem(source.file ?? layer.shown, `agent "${agent.name}" is already defined in ${where}; this one is not loaded (rename one of them)`, 'name');
        return;
      }
      this.problem(source.file ?? layer.shown, `agent "${agent.name}" overrides the one in ${where}`, 'name', 'warning');
    }
    this.agents.set(agent.name, { agent, source, ...(definition ? { definition } : {}) });
  }

  /** The agents an agent may start must exist and not be itself (depth bounds deeper cycles at run time). */
  private checkSubagents(): void {
    for (const [name, e] of [...this.agents]) {
      const wanted = e.agent.agents ?? [];
      const bad = wanted.includes(name)
        ? `lists itself: an agent cannot start itself`
        : wanted.filter((a: string) => !this.agents.has(a)).map((a: string) => `unknown agent "${a}" (agents: ${this.names().join(', ')})`)[0];
      if (!bad) continue;
      this.problem(e.source.file ?? 'builtin', `${bad}; ${name} is not loaded`, 'agents');
      this.agents.delete(name);
    }
  }

  private applyDisable(): void {
    for (const name of this.config.disable ?? []) {
      if (this.agents.delete(name)) continue;
      if (this.tools.has(name)) {
        this.tools.delete(name);
        continue;
      }
      this.problem('config.json', `disables "${name}", which is neither an agent nor a tool`, 'disable', 'warning');
    }
  }

  get(name: string): AnyAgent | undefined {
    return this.agents.get(name)?.agent;
  }

  /** Why an agent of this name did not load (`.runtrail/agents/x.md failed to load: …`); undefined when it did or is unknown. */
  unavailable(name: string): string | undefined {
    return this.agents.has(name) ? undefined : this.failedAgents.get(name);
  }

  names(): string[] {
    return [...this.agents.keys()].sort();
  }

  list(): AnyAgent[] {
    return this.names().map((n) => this.agents.get(n)!.agent);
  }

  entries(): AgentEntry[] {
    return this.names().map((n) => this.agents.get(n)!);
  }
}

/** A durability setting's problem says the value it found: the field bounds what a crash costs, and
 *  its value is what the operator reads for. */
function withValue(message: string, raw: unknown, path: ReadonlyArray<string | number>): string {
  if (path[0] !== 'durability' || path.length < 2) return message;
  let v: unknown = raw;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined;
  return v === undefined ? message : `${message}, got ${JSON.stringify(v)}`;
}
