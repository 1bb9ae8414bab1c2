import { existsSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import type { Router } from 'express';
import { runReadinessChecks } from '@svc/service-kit';

/**
 * `/healthz`: the process is up. `/readyz`: the built page is there and both upstreams answer their own
 * `/healthz` (a sign-in or an API call would fail otherwise).
 */
export function healthRoutes(deps: { publicDir: string; hubUrl: string; workflowUrl: string }): Router {
  const router = express.Router();
  const answers = (url: string) => async () => {
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    if (!response.ok) throw new Error(`answered ${response.status}`);
  };
  const checks = {
    page: async () => {
      if (!existsSync(path.join(deps.publicDir, 'index.html'))) throw new Error('index.html is not built');
    },
    hub: answers(deps.hubUrl),
    workflow: answers(deps.workflowUrl),
  };
  router.get('/healthz', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const report = await runReadinessChecks(checks, 3000);
    res.setHeader('Cache-Control', 'no-store');
    res
      .status(report.ready ? 200 : 503)
      .json({ status: report.ready ? 'ready' : 'not_ready', checks: report.checks });
  });
  return router;
}
