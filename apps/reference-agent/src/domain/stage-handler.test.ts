import { isStageBlockedError, StageBlockedError } from './stage-handler';

describe('isStageBlockedError', () => {
  it('when the error is a StageBlockedError or only named like one, then it is recognised', () => {
    expect(isStageBlockedError(new StageBlockedError('waiting', { retryAfterSeconds: 5 }))).toBe(true);
    const foreign = Object.assign(new Error('waiting'), { name: 'StageBlockedError', retryAfterSeconds: 5 });
    expect(isStageBlockedError(foreign)).toBe(true);
  });

  it('when the error is anything else, then it is not', () => {
    expect(isStageBlockedError(new Error('boom'))).toBe(false);
    expect(isStageBlockedError({ name: 'StageBlockedError' })).toBe(false);
    expect(isStageBlockedError('StageBlockedError')).toBe(false);
  });
});
