/**
 * An image among a run's file inputs (an upload) goes to the model with the goal: attached to the
 * first user message, an image part for vision models and a withheld note for the others.
 */
import { open } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { sniffImageMediaType } from '../../providers/image-type.js';
import { MAX_IMAGE_BYTES } from '../../providers/message-mapping.js';
import type { ImageAttachment } from '../../providers/model-provider.js';

const IMAGE_NAME = /\.(png|jpe?g|gif|webp)$/i;

/** The image file inputs (by content, not name alone) under the run folder; too large ones as notes. */
export async function inputImages(
  runRoot: string,
  input: Record<string, unknown>,
  fileInputs: readonly string[],
): Promise<{ images: ImageAttachment[]; notes: string[] }> {
  const images: ImageAttachment[] = [];
  const notes: string[] = [];
  for (const key of fileInputs) {
    const rel = input[key];
    if (typeof rel !== 'string' || !IMAGE_NAME.test(rel)) continue;
    let fh;
    try {
      fh = await open(join(runRoot, rel), 'r');
    } catch {
      continue; // the run's own checks report a missing input
    }
    try {
      const { size } = await fh.stat();
      if (size > MAX_IMAGE_BYTES) {
        notes.push(`[image input ${key} (${basename(rel)}, ${Math.round(size / 1024)} KB) withheld: larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MB]`);
        continue;
      }
      const bytes = await fh.readFile();
      const mediaType = sniffImageMediaType(bytes);
      if (mediaType) images.push({ mediaType, data: Buffer.from(bytes).toString('base64'), label: `${key}: ${basename(rel)}` });
    } finally {
      await fh.close();
    }
  }
  return { images, notes };
}
