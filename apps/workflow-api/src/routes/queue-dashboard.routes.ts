import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { Express, NextFunction, Request, Response } from 'express';
import { AppError, labelOperation } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';
import { requireOperator } from '../auth/operator-credential';

/** Where the queue dashboard answers on the worker's probe listener. */
export const QUEUE_DASHBOARD_PATH = '/queues';

export interface QueueDashboardOptions {
  queues: Queue[];
  /** The operator credential (`SVC_OPERATOR_TOKEN`); without it the dashboard is off. */
  operatorToken: string | undefined;
  /** Read-only (the default): jobs and queues can be looked at, never changed. */
  readOnly: boolean;
  logger: Logger;
}

const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * The queue dashboard (bull-board) at `/queues`, behind the operator credential. Read-only mode is enforced
 * twice: every queue is given to bull-board read-only (its pages show no actions and its API refuses them),
 * and any request other than GET or HEAD is refused here with 405 before it reaches bull-board. Without an
 * operator token every dashboard path answers 404 `queue_dashboard_disabled`, saying how to turn it on.
 */
export function mountQueueDashboard(app: Express, options: QueueDashboardOptions): void {
  const label = (_req: Request, res: Response, next: NextFunction) => {
    labelOperation(res, 'queueDashboard');
    next();
  };
  if (!options.operatorToken) {
    options.logger.info('queue dashboard off: SVC_OPERATOR_TOKEN is not set');
    app.use(QUEUE_DASHBOARD_PATH, label, (_req: Request, _res: Response, next: NextFunction) => {
      next(
        new AppError({
          status: 404,
          code: 'queue_dashboard_disabled',
          detail: 'The queue dashboard is off: set SVC_OPERATOR_TOKEN on the worker to turn it on.',
        }),
      );
    });
    return;
  }
  const server = new ExpressAdapter();
  server.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: options.queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: options.readOnly })),
    serverAdapter: server,
    options: { uiConfig: { boardTitle: 'svc queues' } },
  });
  const readOnly = (req: Request, _res: Response, next: NextFunction) => {
    if (!options.readOnly || READ_METHODS.has(req.method)) {
      next();
      return;
    }
    next(
      new AppError({
        status: 405,
        code: 'queue_dashboard_read_only',
        detail:
          'The queue dashboard is read-only; set WORKFLOW_QUEUE_DASHBOARD_READ_ONLY=false on the worker to allow changes.',
        headers: { Allow: 'GET, HEAD' },
      }),
    );
  };
  app.use(
    QUEUE_DASHBOARD_PATH,
    label,
    requireOperator(options.operatorToken),
    readOnly,
    server.getRouter() as (req: Request, res: Response, next: NextFunction) => void,
  );
  options.logger.info(
    { path: QUEUE_DASHBOARD_PATH, read_only: options.readOnly },
    'queue dashboard on the probe listener',
  );
}
