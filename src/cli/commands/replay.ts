/** `runtrail replay <run_id>`: a run's events.jsonl through the same bridge as live, as text, NDJSON or SSE. */
import { RunRequestError } from '../../runtime/run-request-error.js';
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { projectContext, serviceFor } from '../project-context.js';
import { WIRE_FORMATS, createWireWriter, type WireFormat } from '../wire-output.js';

export const replayCommand: CliCommand = {
  name: 'replay',
  usage: `  replay <run_id>     replay a run from runtime/events.jsonl: --format ndjson|sse|text (default text),
                      --show-reasoning
`,
  async run(args, deps) {
    const { values, positionals } = parse(args, { format: { type: 'string' }, 'show-reasoning': { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('replay needs a run id');
    const format = (values.format ?? 'text') as WireFormat;
    if (!WIRE_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${WIRE_FORMATS.join(', ')}, got ${JSON.stringify(values.format)}`);
    const service = serviceFor(await projectContext(values, deps), deps);
    try {
      const s = await service.get(positionals[0]);
      if (!s) throw new RunRequestError('not_found', `run ${positionals[0]} not found in ${service.runsDir}`);
      const writer = createWireWriter(format, s.run_id, deps.stdout, { showReasoning: values['show-reasoning'] === true, traceId: s.trace_id });
      for await (const ev of service.events(s.run_id)) writer.write(ev);
      return EXIT.ok;
    } finally {
      await service.close();
    }
  },
};
