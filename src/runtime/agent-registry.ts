/** The agents a RunService serves, by name. */
import type { Agent } from './agent.js';

// plugins of many input types live side by side; each validates its own input with inputSchema
// biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
export type AnyBusinessPlugin = Agent<any>; // any: see above

/** Where a RunService finds plugins by name: a fixed registry, or one the extension registry refreshes. */
export interface AgentSource {
  get(name: string): AnyBusinessPlugin | undefined;
  names(): string[];
  list(): AnyBusinessPlugin[];
  /** Why an agent of this name is defined but not loaded (`.runtrail/agents/x.md failed to load: …`). */
  unavailable?(name: string): string | undefined;
}

/** A source whose plugins can be replaced while the service runs (`serve --watch`): the next run sees them. */
export class LiveAgentSource implements AgentSource {
  constructor(private current: AgentSource) {}

  replace(next: AgentSource): void {
    this.current = next;
  }

  get(name: string): AnyBusinessPlugin | undefined {
    return this.current.get(name);
  }

  names(): string[] {
    return this.current.names();
  }

  list(): AnyBusinessPlugin[] {
    return this.current.list();
  }

  unavailable(name: string): string | undefined {
    return this.current.unavailable?.(name);
  }
}

export class AgentRegistry implements AgentSource {
  private readonly byName = new Map<string, AnyBusinessPlugin>();

  constructor(plugins: AnyBusinessPlugin[] = []) {
    for (const p of plugins) this.register(p);
  }

  /** Throws on a nameless plugin or a name registered twice. */
  register(plugin: AnyBusinessPlugin): void {
    if (!plugin || typeof plugin.name !== 'string' || !plugin.name) throw new TypeError('AgentRegistry.register: a plugin needs a name');
    if (this.byName.has(plugin.name)) throw new TypeError(`AgentRegistry.register: plugin "${plugin.name}" is already registered`);
    this.byName.set(plugin.name, plugin);
  }

  get(name: string): AnyBusinessPlugin | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  list(): AnyBusinessPlugin[] {
    return this.names().map((n) => this.byName.get(n)!);
  }
}
