/** POST /api/uploads (multipart, one file) → 201 { path }: a path usable as a file input such as csv_path. */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import { HttpError, sendError } from './http-error.js';

/** Keeps letters, digits, dot, dash, underscore; never a dot-file or an empty name. */
export function safeUploadName(original: string): string {
  const base = basename(original.replace(/\\/g, '/')).normalize('NFKC');
  let clean = base.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(-100);
  if (!clean) clean = 'upload';
  return `${randomBytes(6).toString('hex')}_${clean}`;
}

export function registerUploadRoute(app: FastifyInstance, uploadDir: string, maxFileBytes: number): void {
  app.post('/api/uploads', async (req, reply) => {
    if (!req.isMultipart()) {
      return sendError(reply, new HttpError(400, 'invalid_request', 'expected multipart/form-data with one file field', { issues: [{ path: 'file', message: 'missing' }] }));
    }
    let file;
    try {
      file = await req.file({ limits: { fileSize: maxFileBytes, files: 1 } });
    } catch (err) {
      return sendError(reply, new HttpError(400, 'invalid_request', `bad multipart body: ${(err as Error).message}`));
    }
    if (!file) return sendError(reply, new HttpError(400, 'invalid_request', 'no file in the multipart body', { issues: [{ path: 'file', message: 'missing' }] }));
    await mkdir(uploadDir, { recursive: true });
    const target = join(uploadDir, safeUploadName(file.filename || 'upload'));
    try {
      await pipeline(file.file, createWriteStream(target, { flags: 'wx' }));
    } catch (err) {
      await rm(target, { force: true });
      const e = err as { code?: string; message?: string };
      if (e.code === 'FST_REQ_FILE_TOO_LARGE') {
        return sendError(reply, new HttpError(413, 'file_too_large', `upload is larger than the limit (${maxFileBytes} bytes)`));
      }
      return sendError(reply, new HttpError(400, 'invalid_request', `upload failed: ${e.message ?? String(err)}`));
    }
    if (file.file.truncated) {
      await rm(target, { force: true });
      return sendError(reply, new HttpError(413, 'file_too_large', `upload is larger than the limit (${maxFileBytes} bytes)`));
    }
    return reply.code(201).send({ path: target, name: file.filename, bytes: file.file.bytesRead });
  });
}
