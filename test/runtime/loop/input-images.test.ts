/** An uploaded image among a run's file inputs reaches the model with the goal (and the Anthropic request as an image block). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Agent } from '../../../src/runtime/agent.js';
import type { RunService } from '../../../src/runtime/service/run-service.js';
import { MAX_IMAGE_BYTES } from '../../../src/providers/message-mapping.js';
import { sniffImageMediaType } from '../../../src/providers/image-type.js';
import { createAiSdkProvider } from '../../../src/providers/ai-sdk-provider.js';
import { FakeProvider } from '../fixtures/fake-provider.js';
import { makeEnv, makeService, type TestEnv } from '../fixtures/setup.js';
import { sse, startRecordedServer } from '../../providers/recorded-server.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

function imagePlugin(): Agent<{ image_path: string }> {
  return {
    name: 'look',
    version: '0.1.0',
    description: 'Describes an image.',
    inputSchema: z.strictObject({ image_path: z.string() }),
    fileInputs: ['image_path'],
    defaultSkill: null,
    defaultGoal: 'Describe the image.',
    promptFragments: [],
    createTools: () => [],
    plan: [],
    artifacts: [],
    validators: [],
    offlineProcedure: () => ({ text: 'an image' }),
  };
}

let env: TestEnv;
let svc: RunService | null = null;
beforeEach(() => {
  env = makeEnv();
});
afterEach(async () => {
  await svc?.close();
  svc = null;
  env.cleanup();
});

describe('image file inputs', () => {
  it('are attached to the goal message, by content type', async () => {
    const file = join(env.dir, 'chart.png');
    writeFileSync(file, PNG);
    const provider = new FakeProvider([{ text: 'A one-pixel chart.' }]);
    svc = makeService(env, provider, { agents: [imagePlugin()] });
    const { run_id } = await svc.create({ plugin: 'look', input: { image_path: file } });
    expect((await svc.wait(run_id)).status).toBe('completed');
    const goal = provider.requests[0]!.messages.at(-1)!;
    expect(goal).toEqual({
      role: 'user',
      content: 'Describe the image.',
      images: [{ mediaType: 'image/png', data: PNG.toString('base64'), label: 'image_path: chart.png' }],
    });
  });

  it('an image over the size limit becomes a note instead of bytes', async () => {
    const file = join(env.dir, 'huge.png');
    writeFileSync(file, Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE_BYTES)]));
    const provider = new FakeProvider([{ text: 'ok' }]);
    svc = makeService(env, provider, { agents: [imagePlugin()] });
    const { run_id } = await svc.create({ plugin: 'look', input: { image_path: file } });
    await svc.wait(run_id);
    const goal = provider.requests[0]!.messages.at(-1)!;
    expect(goal).not.toHaveProperty('images');
    expect(goal.content).toMatch(/^Describe the image\.\n\[image input image_path \(huge\.png, \d+ KB\) withheld: larger than 5 MB\]$/);
  });

  it('go to an Anthropic model as an image block of the first user message', async () => {
    const server = await startRecordedServer();
    try {
      server.reply(sse('anthropic-messages-cached-text.sse'));
      const file = join(env.dir, 'chart.png');
      writeFileSync(file, PNG);
      svc = makeService(
        env,
        () =>
          createAiSdkProvider({
            provider: 'anthropic',
            model: 'claude-haiku-4-5',
            baseURL: server.baseURL,
            env: { ANTHROPIC_API_KEY: 'sk-test-0123456789abcdef' },
          }),
        { agents: [imagePlugin()] },
      );
      const { run_id } = await svc.create({ plugin: 'look', input: { image_path: file } });
      expect((await svc.wait(run_id)).status).toBe('completed');
      const first = (server.requests[0]!.body.messages as Array<{ content: Array<Record<string, unknown>> }>)[0]!;
      expect(first.content[0]).toMatchObject({ type: 'text', text: 'Describe the image.' });
      expect(first.content[1]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } });
    } finally {
      await server.close();
    }
  });
});

describe('sniffImageMediaType', () => {
  it('knows PNG, JPEG, GIF and WebP by their first bytes, and nothing else', () => {
    expect(sniffImageMediaType(PNG)).toBe('image/png');
    expect(sniffImageMediaType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImageMediaType(Buffer.from('GIF89a'))).toBe('image/gif');
    expect(sniffImageMediaType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageMediaType(Buffer.from('not an image'))).toBeNull();
  });
});
