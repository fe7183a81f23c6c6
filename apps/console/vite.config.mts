import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Static output under dist/ (git-ignored), served by the api role at /console (apps/api/src/console).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/apps/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Small enough to ship whole; no source maps in the served build.
    sourcemap: false,
  },
});
