/** Invocation states after which nothing changes any more. */
export const TERMINAL_STATES = ['completed', 'failed', 'cancelled'] as const;
/** Stage states in which the stage has an owner working (or about to work) on it. */
export const OPEN_STAGE_STATES = ['assigned', 'claimed', 'blocked'] as const;

export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}
