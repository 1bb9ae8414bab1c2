import { existsSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { chooseEncoding, COMPRESSIBLE, ENCODING_SUFFIX } from '../domain/content-encoding';
import type { StaticEncoding } from '../domain/content-encoding';

/** Paths that belong to the server, never to the page's client-side routes. */
const SERVER_PATHS = /^\/(hub|workflow|session|healthz|readyz|assets)(\/|$)/;
/** A built asset's file name: the build writes them flat, hashed, without odd characters. */
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Hashed files never change under their name. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The page may be kept but is checked with the server before each use (a new build shows at once). */
const REVALIDATE = 'no-cache';

/** The encodings the build wrote beside `file`. */
function encodingsOnDisk(file: string): Set<StaticEncoding> {
  const found = new Set<StaticEncoding>();
  for (const encoding of ['br', 'gzip'] as const)
    if (existsSync(file + ENCODING_SUFFIX[encoding])) found.add(encoding);
  return found;
}

/**
 * Sends `file` with `cacheControl`, in the best encoding the browser accepts of those the build wrote
 * beside it (`.br`, `.gz`), with its own `Content-Type`, `Content-Encoding` and `Vary: Accept-Encoding`.
 * A missing file falls through (`next()`), to the 404 of the app.
 */
function sendStatic(
  req: Request,
  res: Response,
  next: NextFunction,
  file: string,
  cacheControl: string,
  encodings: Set<StaticEncoding>,
): void {
  const compressible = COMPRESSIBLE.test(file);
  const encoding = compressible ? chooseEncoding(req.get('accept-encoding'), encodings) : undefined;
  if (compressible) res.vary('Accept-Encoding');
  res.type(path.extname(file));
  res.setHeader('Cache-Control', cacheControl);
  if (encoding) res.setHeader('Content-Encoding', encoding);
  res.sendFile(
    encoding ? file + ENCODING_SUFFIX[encoding] : file,
    { cacheControl: false, dotfiles: 'deny' },
    (error?: Error & { status?: number }) => {
      if (!error) return;
      if (res.headersSent) return;
      res.removeHeader('Content-Encoding');
      if (error.status === 404) next();
      else next(error);
    },
  );
}

/**
 * The built single-page app: hashed files under `/assets` are cached for a year as immutable;
 * `index.html` is revalidated on every use and answers every other page address (`/w/dev/agents`), where
 * the client-side router takes over. Scripts, styles and the page go precompressed (brotli, else gzip) when
 * the browser accepts it.
 */
export function staticRoutes(publicDir: string): Router {
  const router = express.Router();
  const assetsDir = path.join(publicDir, 'assets');
  // An asset's name never changes its content, so what the build wrote beside it is looked up once.
  const assetEncodings = new Map<string, Set<StaticEncoding>>();
  router.get('/assets/:name', (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.name);
    if (!ASSET_NAME.test(name) || name.endsWith('.br') || name.endsWith('.gz')) return next();
    const file = path.join(assetsDir, name);
    let encodings = assetEncodings.get(name);
    if (!encodings) {
      if (!existsSync(file)) return next();
      encodings = encodingsOnDisk(file);
      assetEncodings.set(name, encodings);
    }
    sendStatic(req, res, next, file, IMMUTABLE, encodings);
  });
  const index = path.join(publicDir, 'index.html');
  const others = express.static(publicDir, {
    index: false,
    fallthrough: true,
    setHeaders: (res) => res.setHeader('Cache-Control', REVALIDATE),
  });
  // Other files the build put at the top (none today) as they are; never the assets or a compressed copy.
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.path.startsWith('/assets/') || /\.(br|gz)$/.test(req.path)) return next();
    return others(req, res, next);
  });
  router.get(/.*/, (req: Request, res: Response, next: NextFunction) => {
    if (SERVER_PATHS.test(req.path) || !req.accepts('html')) return next();
    sendStatic(req, res, next, index, REVALIDATE, encodingsOnDisk(index));
  });
  return router;
}
