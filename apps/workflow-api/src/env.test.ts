import { loadWorkflowConfig as load, reconcileConcurrencyOf } from './env';

/** The one setting without a default, with the ones a test gives. */
const loadWorkflowConfig = (env: Record<string, string>) =>
  load({ HUB_SERVICE_TOKEN: 'x'.repeat(32), ...env });

describe('reconcileConcurrencyOf', () => {
  it('when nothing is set, then a worker runs as many reconciles as its pool has connections', () => {
    expect(reconcileConcurrencyOf(loadWorkflowConfig({}))).toBe(10);
  });

  it('when only the pool size is set, then the reconciles follow it', () => {
    expect(reconcileConcurrencyOf(loadWorkflowConfig({ WORKFLOW_DB_POOL_SIZE: '4' }))).toBe(4);
  });

  it('when WORKFLOW_RECONCILE_CONCURRENCY is set, then it wins over the pool size', () => {
    const config = loadWorkflowConfig({ WORKFLOW_DB_POOL_SIZE: '4', WORKFLOW_RECONCILE_CONCURRENCY: '20' });
    expect(reconcileConcurrencyOf(config)).toBe(20);
  });

  it('when WORKFLOW_RECONCILE_CONCURRENCY is 0, then the configuration is refused with the variable named', () => {
    expect(() => loadWorkflowConfig({ WORKFLOW_RECONCILE_CONCURRENCY: '0' })).toThrow(
      /WORKFLOW_RECONCILE_CONCURRENCY/,
    );
  });
});
