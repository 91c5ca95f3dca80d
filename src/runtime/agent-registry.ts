/** The agents a RunService serves, by name. */
import type { Agent } from './agent.js';

// agents of many input types live side by side; each validates its own input with inputSchema
// biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
export type AnyAgent = Agent<any>; // any: see above

/** Where a RunService finds agents by name: a fixed registry, or one the extension registry refreshes. */
export interface AgentSource {
  get(name: string): AnyAgent | undefined;
  names(): string[];
  list(): AnyAgent[];
  /** Why an agent of this name is defined but not loaded (`.runtrail/agents/x.md failed to load: …`). */
  unavailable?(name: string): string | undefined;
}

/** A source whose agents can be replaced while the service runs (`serve --watch`): the next run sees them. */
export class LiveAgentSource implements AgentSource {
  constructor(private current: AgentSource) {}

  replace(next: AgentSource): void {
    this.current = next;
  }

  get(name: string): AnyAgent | undefined {
    return this.current.get(name);
  }

  names(): string[] {
    return this.current.names();
  }

  list(): AnyAgent[] {
    return this.current.list();
  }

  unavailable(name: string): string | undefined {
    return this.current.unavailable?.(name);
  }
}

export class AgentRegistry implements AgentSource {
  private readonly byName = new Map<string, AnyAgent>();

  constructor(agents: AnyAgent[] = []) {
    for (const a of agents) this.register(a);
  }

  /** Throws on a nameless agent or a name registered twice. */
  register(agent: AnyAgent): void {
    if (!agent || typeof agent.name !== 'string' || !agent.name) throw new TypeError('AgentRegistry.register: an agent needs a name');
    if (this.byName.has(agent.name)) throw new TypeError(`AgentRegistry.register: agent "${agent.name}" is already registered`);
    this.byName.set(agent.name, agent);
  }

  get(name: string): AnyAgent | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  list(): AnyAgent[] {
    return this.names().map((n) => this.byName.get(n)!);
  }
}
