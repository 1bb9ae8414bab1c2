import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The single-page app: built from src/web into dist/public, which the server serves. Nothing inline (no
 * inline script or style, no module preload polyfill), so the page runs under the server's strict policy.
 */
export default defineConfig({
  root: path.join(here, 'src/web'),
  base: '/',
  plugins: [react()],
  resolve: {
    // The scope catalog (presets, destructive scopes) the hub itself uses, compiled from its source: the
    // package's entry point also holds the token code, which has no place in the page.
    // The contract documents and types the pages check input against come from the generated sources too.
    alias: {
      '@svc/auth/scopes': path.join(here, '../../packages/auth/src/scopes.ts'),
      '@svc/contracts/documents': path.join(here, '../../packages/contracts/src/generated/documents.ts'),
      '@svc/contracts/agent-console': path.join(
        here,
        '../../packages/contracts/src/generated/agentConsole.ts',
      ),
    },
  },
  build: {
    outDir: path.join(here, 'dist/public'),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
