/** The rules of model assistance that need no database: periods, loopback, settings checks, the prompt. */
import { buildAssistPrompt, chatCompletionsUrl, reservedTokens } from '../src/domain/assist-provider';
import {
  ASSIST_MAX_ANSWER_TOKENS,
  assertUsableAssistSettings,
  atWarning,
  budgetPeriods,
  defaultAssistSettings,
  isLoopbackBaseUrl,
} from '../src/domain/assist-settings';

test('budget periods are the UTC day and month, resetting at their ends', () => {
  const { day, month } = budgetPeriods(new Date('2026-12-31T23:59:59.500Z'));
  expect(day).toMatchObject({ kind: 'day', start: '2026-12-31' });
  expect(day.resetsAt.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  expect(month).toMatchObject({ kind: 'month', start: '2026-12-01' });
  expect(month.resetsAt.toISOString()).toBe('2027-01-01T00:00:00.000Z');
});

test('warning threshold: reached at the share, and always for a zero ceiling', () => {
  expect(atWarning(79, 100, 80)).toBe(false);
  expect(atWarning(80, 100, 80)).toBe(true);
  expect(atWarning(0, 0, 80)).toBe(true);
});

test.each([
  ['http://127.0.0.1:8080/v1', true],
  ['http://localhost:11434/v1', true],
  ['http://[::1]:8080/v1', true],
  ['http://10.0.0.5/v1', false],
  ['https://api.openai.com/v1', false],
  ['not a url', false],
])('%s is loopback: %s', (url, loopback) => {
  expect(isLoopbackBaseUrl(url)).toBe(loopback);
});

test('settings: on needs a provider, remote needs the data policy, no credentials in the URL', () => {
  const base = { ...defaultAssistSettings('prj_1'), enabled: true };
  expect(() => assertUsableAssistSettings(base)).toThrow(
    expect.objectContaining({ code: 'assistance_provider_required' }),
  );
  const remote = { ...base, provider: 'openai', model: 'm', baseUrl: 'https://models.example/v1' };
  expect(() => assertUsableAssistSettings(remote)).toThrow(
    expect.objectContaining({ code: 'assistance_data_policy_refused' }),
  );
  expect(() => assertUsableAssistSettings({ ...remote, dataMayLeaveWorkspace: true })).not.toThrow();
  expect(() => assertUsableAssistSettings({ ...remote, baseUrl: 'https://u:p@models.example/v1' })).toThrow(
    expect.objectContaining({ code: 'assistance_base_url_invalid' }),
  );
  // Off, a project may keep an incomplete configuration.
  expect(() => assertUsableAssistSettings(defaultAssistSettings('prj_1'))).not.toThrow();
});

test('the prompt masks secrets, offers only the listed ids, and reserves an upper bound of tokens', () => {
  const prompt = buildAssistPrompt({
    intent: 'rotate sk-abcdefghijklmnopqrstuvwx now',
    requiredCapabilities: ['code'],
    contracts: [{ contract_id: 'wfc_1', name: 'Rotate', phrases: ['rotate key'] }],
  });
  expect(prompt.text).not.toContain('sk-abcdefghijklmnopqrstuvwx');
  expect(prompt.text).toContain('sk-[REDACTED]');
  expect(prompt.sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(prompt.schema).toMatchObject({
    properties: { contract_id: { anyOf: [{ type: 'string', enum: ['wfc_1'] }, { type: 'null' }] } },
  });
  expect(reservedTokens(prompt)).toBe(Buffer.byteLength(prompt.text) + ASSIST_MAX_ANSWER_TOKENS);
  expect(chatCompletionsUrl('http://127.0.0.1:1/v1/')).toBe('http://127.0.0.1:1/v1/chat/completions');
});
