/**
 * Forwards termination signals Runtrail receives to every live child group, and removes its
 * listeners once no child is left. When the bridge is the only
 * listener, the signal would normally end Runtrail: it lets the groups end first, then re-raises.
 */
export interface BridgedChild {
  /** Deliver a signal to the child's group. */
  signal(sig: NodeJS.Signals): void;
  /** Ends the group (TERM, grace, KILL). */
  terminate(): Promise<void>;
  /** Last resort when Runtrail exits synchronously. */
  killNow(): void;
}

const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const live = new Set<BridgedChild>();
const handlers = new Map<NodeJS.Signals, () => void>();
let exitHook: (() => void) | null = null;
/** Holders that end the children themselves on a signal (a draining worker); the exit hook still kills. */
let holders = 0;

function install(): void {
  for (const sig of FORWARDED) {
    const h = () => onSignal(sig);
    handlers.set(sig, h);
    process.on(sig, h);
  }
  exitHook = () => {
    for (const c of live) c.killNow();
  };
  process.on('exit', exitHook);
}

function uninstall(): void {
  for (const [sig, h] of handlers) process.removeListener(sig, h);
  handlers.clear();
  if (exitHook) process.removeListener('exit', exitHook);
  exitHook = null;
}

function onSignal(sig: NodeJS.Signals): void {
  const children = [...live];
  const alone = process.listenerCount(sig) === 1;
  // a draining worker lets its runs' children finish with the runs; it ends what is left itself
  if (holders > 0 && !alone) return;
  for (const c of children) c.signal(sig);
  if (!alone) return; // someone else (the server) owns shutdown
  void Promise.allSettled(children.map((c) => c.terminate())).then(() => {
    uninstall();
    process.kill(process.pid, sig);
  });
}

/** Registers a live child; call the returned function when it has ended. */
export function bridgeChild(child: BridgedChild): () => void {
  live.add(child);
  if (live.size === 1 && handlers.size === 0) install();
  return () => {
    if (!live.delete(child)) return;
    if (live.size === 0) uninstall();
  };
}

/**
 * Signals stop being forwarded while held: the caller owns shutdown and ends every child itself
 * (a worker draining on SIGTERM lets its runs, and their commands, finish first). Returns the release.
 */
export function holdSignalForwarding(): () => void {
  holders++;
  let held = true;
  return () => {
    if (held) holders--;
    held = false;
  };
}

/** For tests: whether the bridge currently listens. */
export function signalBridgeActive(): boolean {
  return handlers.size > 0;
}
