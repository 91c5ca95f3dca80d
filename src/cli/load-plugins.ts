/** The builtin plugins (`src/plugins/builtin-plugins.ts`, owned by the plugins engineer). */
import type { BusinessPlugin } from '../runtime/business-plugin.js';

export async function loadBuiltinPlugins(): Promise<BusinessPlugin[]> {
  // a variable specifier keeps the CLI compiling before that module lands
  const spec = '../plugins/builtin-plugins.js';
  try {
    const mod = (await import(spec)) as { builtinPlugins?: () => BusinessPlugin[] };
    if (typeof mod.builtinPlugins === 'function') return mod.builtinPlugins();
  } catch {
    // fall through: no builtins in this build
  }
  return [];
}
