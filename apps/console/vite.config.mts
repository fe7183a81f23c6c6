import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Static output under dist/ (git-ignored), served by the api role at /console (apps/api/src/console).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // The typed client from its sources, as tsconfig.base.json maps it for the rest of the repo.
  resolve: { alias: { '@timer/client': fileURLToPath(new URL('../../libs/client/src/index.ts', import.meta.url)) } },
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/apps/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Small enough to ship whole; no source maps in the served build.
    sourcemap: false,
  },
});
