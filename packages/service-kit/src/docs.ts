import type { Express, NextFunction, Request, Response } from 'express';
import { PROBLEM_CODES, PROBLEM_TYPE_PATH, problemCodeDoc } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { renderApiReference, renderErrorIndex, renderErrorPage } from './docs-render';

export interface ApiDocsOptions {
  /** The public document the service serves at `/openapi.json`. */
  document: OpenApiDocument;
}

/**
 * Pages that load nothing else: inline styles only, no script, no frame, no form, nothing from another host
 * (the browser enforces it).
 */
const HTML_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'public, max-age=300',
};

/**
 * Serves the API reference of `document` at `GET /docs` and a page per problem code at
 * `GET /docs/errors/<code>` (the `type` of every problem), with the list of codes at `GET /docs/errors`. The
 * pages are rendered once, on first use, from the bundled document and the problem code registry; no
 * credential is needed. An unknown code falls through to the app's 404 problem.
 */
export function mountApiDocs(app: Express, options: ApiDocsOptions): void {
  const title = options.document.info.title;
  let reference: string | undefined;
  let index: string | undefined;
  const pages = new Map<string, string>();
  const send = (res: Response, html: string) => res.status(200).set(HTML_HEADERS).send(html);

  app.get(['/docs', '/docs/'], (_req: Request, res: Response) => {
    reference ??= renderApiReference(options.document, PROBLEM_CODES);
    send(res, reference);
  });
  app.get(['/docs/errors', '/docs/errors/'], (_req: Request, res: Response) => {
    index ??= renderErrorIndex(title, PROBLEM_CODES);
    send(res, index);
  });
  app.get(`${PROBLEM_TYPE_PATH}:code`, (req: Request, res: Response, next: NextFunction) => {
    const code = String(req.params.code);
    const doc = problemCodeDoc(code);
    if (!doc) {
      next();
      return;
    }
    let html = pages.get(code);
    if (!html) {
      html = renderErrorPage(title, doc, PROBLEM_CODES);
      pages.set(code, html);
    }
    send(res, html);
  });
}
