import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

// Built to web/dist and served by `runtrail serve` at `/`; relative asset URLs, no external network.
export default defineConfig({
  root: here,
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1024 },
  server: { proxy: { '/api': 'http://127.0.0.1:7777', '/metrics': 'http://127.0.0.1:7777' } },
});
