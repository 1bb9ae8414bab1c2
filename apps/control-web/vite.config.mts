import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Text the browser loads, worth compressing once it is at least this big. */
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|map|txt)$/;
const MIN_BYTES = 1024;

/**
 * Writes `<file>.br` (brotli, best quality) and `<file>.gz` (gzip, level 9) beside every built text file of
 * at least 1 kB, once the bundle is on disk; the server sends the one the browser accepts. A compressed copy
 * that would not be smaller is not written.
 */
function precompress(outDir: string): Plugin {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const file = path.join(dir, name);
      return statSync(file).isDirectory() ? walk(file) : [file];
    });
  return {
    name: 'svc-precompress',
    apply: 'build',
    closeBundle() {
      for (const file of walk(outDir)) {
        if (!COMPRESSIBLE.test(file)) continue;
        const source = readFileSync(file);
        if (source.length < MIN_BYTES) continue;
        const br = brotliCompressSync(source, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_SIZE_HINT]: source.length,
          },
        });
        const gz = gzipSync(source, { level: 9 });
        if (br.length < source.length) writeFileSync(`${file}.br`, br);
        if (gz.length < source.length) writeFileSync(`${file}.gz`, gz);
      }
    },
  };
}

const outDir = path.join(here, 'dist/public');

/**
 * The single-page app: built from src/web into dist/public, which the server serves. Nothing inline (no
 * inline script or style, no module preload polyfill), so the page runs under the server's strict policy.
 * Every text file goes precompressed beside itself (brotli and gzip).
 */
export default defineConfig({
  root: path.join(here, 'src/web'),
  base: '/',
  plugins: [react(), precompress(outDir)],
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
    outDir,
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
