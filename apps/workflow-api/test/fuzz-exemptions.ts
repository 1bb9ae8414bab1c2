import type { FuzzExemption } from '@svc/testing';

/**
 * Checks of the Workflow API's fuzz suite that do not hold for an operation, each with its reason. An entry
 * exempts only answers matching its operation, check and (when given) phase, status and code.
 */
export const WORKFLOW_FUZZ_EXEMPTIONS: readonly FuzzExemption[] = [];
