/** POST /api/uploads (multipart, one file) → 201 { path }: a path usable as a file input such as csv_path.
 *  Each client address keeps its uploads in a folder of its own, within its quota (UploadQuota). */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import { HttpError, sendError } from './http-error.js';
import { clientKey } from './http-limits.js';
import type { UploadQuota } from './upload-quota.js';

/** Keeps letters, digits, dot, dash, underscore; never a dot-file or an empty name. */
export function safeUploadName(original: string): string {
  const base = basename(original.replace(/\\/g, '/')).normalize('NFKC');
  let clean = base
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(-100);
  if (!clean) clean = 'upload';
  return `${randomBytes(6).toString('hex')}_${clean}`;
}

export function registerUploadRoute(app: FastifyInstance, quota: UploadQuota): void {
  quota.start();
  app.addHook('onClose', async () => quota.stop());
  app.post('/api/uploads', async (req, reply) => {
    if (!req.isMultipart()) {
      return sendError(
        reply,
        new HttpError(400, 'invalid_request', 'expected multipart/form-data with one file field', { issues: [{ path: 'file', message: 'missing' }] }),
      );
    }
    const client = clientKey(req.ip);
    const admitted = await quota.admit(client);
    if (!admitted.ok) {
      const r = admitted.refusal;
      return sendError(
        reply,
        new HttpError(r.status, r.code, r.message, { limit: r.status === 429 ? quota.limits.maxFilesPerClient : quota.limits.maxBytesPerClient }),
      );
    }
    try {
      let file;
      try {
        file = await req.file({ limits: { fileSize: admitted.maxBytes, files: 1 } });
      } catch (err) {
        return sendError(reply, new HttpError(400, 'invalid_request', `bad multipart body: ${(err as Error).message}`));
      }
      if (!file)
        return sendError(reply, new HttpError(400, 'invalid_request', 'no file in the multipart body', { issues: [{ path: 'file', message: 'missing' }] }));
      const target = join(admitted.dir, safeUploadName(file.filename || 'upload'));
      const tooLarge = () => {
        const r = quota.tooLarge(client, admitted.maxBytes);
        return sendError(reply, new HttpError(r.status, r.code, r.message));
      };
      try {
        await pipeline(file.file, createWriteStream(target, { flags: 'wx' }));
      } catch (err) {
        await rm(target, { force: true });
        const e = err as { code?: string; message?: string };
        if (e.code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge();
        return sendError(reply, new HttpError(400, 'invalid_request', `upload failed: ${e.message ?? String(err)}`));
      }
      if (file.file.truncated) {
        await rm(target, { force: true });
        return tooLarge();
      }
      if (file.file.bytesRead === 0) {
        // nothing to run on: said now, not by a run that fails later
        await rm(target, { force: true });
        const name = file.filename || 'the upload';
        return sendError(reply, new HttpError(400, 'invalid_request', `${name} is empty (0 bytes)`, { issues: [{ path: 'file', message: 'empty file' }] }));
      }
      return reply.code(201).send({ path: target, name: file.filename, bytes: file.file.bytesRead });
    } finally {
      admitted.done();
    }
  });
}
