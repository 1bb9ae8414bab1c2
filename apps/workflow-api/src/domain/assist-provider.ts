/**
 * The model behind resolve's assistance (decision 48): what it may see (an allow-list, secrets masked by the
 * log rules), the JSON Schema its answer must satisfy, and an OpenAI-compatible chat-completions client with a
 * timeout whose every failure is a typed outcome. No database here.
 */
import { createHash } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import { scrubSecrets } from '@svc/service-kit';
import { ASSIST_MAX_ANSWER_TOKENS } from './assist-settings';

export type AssistFailure = 'provider_down' | 'timeout' | 'invalid_answer';
export type AssistOutcome =
  'suggested' | 'no_suggestion' | AssistFailure | 'budget_exhausted' | 'credential_missing';

/** A contract as the model sees it: id, name and phrases only. */
export interface AssistContractView {
  contract_id: string;
  name: string;
  phrases: string[];
}

export interface AssistContext {
  intent: string;
  requiredCapabilities: string[];
  contracts: AssistContractView[];
}

export interface AssistPrompt {
  messages: { role: 'system' | 'user'; content: string }[];
  /** The exact text sent (messages joined), hashed for the audit event. */
  text: string;
  sha256: string;
  /** The answer schema: `contract_id` must be one of the offered ids, or null. */
  schema: object;
}

const SYSTEM_PROMPT =
  'You route a request to one workflow contract of a project. Choose only among the contracts listed, by ' +
  'their exact contract_id, or answer null when none fits. Never invent an id. Give a short reason. ' +
  'Answer with JSON that matches the given schema and nothing else.';

/** Builds the only text the model receives: the masked intent, the capabilities and the offered contracts. */
export function buildAssistPrompt(context: AssistContext): AssistPrompt {
  const user = JSON.stringify({
    intent: scrubSecrets(context.intent),
    required_capabilities: context.requiredCapabilities.map(scrubSecrets),
    contracts: context.contracts.map((c) => ({
      contract_id: c.contract_id,
      name: scrubSecrets(c.name),
      phrases: c.phrases.map(scrubSecrets),
    })),
  });
  const messages = [
    { role: 'system' as const, content: SYSTEM_PROMPT },
    { role: 'user' as const, content: user },
  ];
  const text = messages.map((m) => `${m.role}: ${m.content}`).join('\n');
  const ids = context.contracts.map((c) => c.contract_id);
  const schema = {
    type: 'object',
    additionalProperties: false,
    required: ['contract_id', 'reason'],
    properties: {
      contract_id: { anyOf: [{ type: 'string', enum: ids }, { type: 'null' }] },
      reason: { type: 'string', minLength: 1, maxLength: 1000 },
    },
  };
  return { messages, text, sha256: createHash('sha256').update(text).digest('hex'), schema };
}

/** Tokens reserved before a call: the prompt's UTF-8 bytes (no token is shorter than a byte) plus the answer cap. */
export function reservedTokens(prompt: AssistPrompt): number {
  return Buffer.byteLength(prompt.text, 'utf8') + ASSIST_MAX_ANSWER_TOKENS;
}

export interface AssistAnswer {
  contractId: string | null;
  reason: string;
}

export type AssistCallResult =
  | {
      ok: true;
      answer: AssistAnswer;
      tokensIn: number | null;
      tokensOut: number | null;
      latencyMs: number;
    }
  | {
      ok: false;
      failure: AssistFailure;
      detail: string;
      tokensIn: number | null;
      tokensOut: number | null;
      latencyMs: number;
    };

export interface AssistProviderCall {
  baseUrl: string;
  model: string;
  apiKey: string;
  timeoutMs: number;
  prompt: AssistPrompt;
  /** Injected in tests; defaults to the global fetch. */
  fetch?: typeof fetch;
}

const ajv = new Ajv2020({ strict: true, allErrors: false });

function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

/** The chat-completions endpoint of a base URL (`…/v1` → `…/v1/chat/completions`). */
export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

/**
 * One chat-completions call with a structured-output request. Never throws: a refused connection or an error
 * status is `provider_down`, no complete answer within `timeoutMs` is `timeout`, and an answer that is not JSON
 * or does not satisfy the schema is `invalid_answer` (never guessed at). Details never carry the key or the URL.
 */
export async function callAssistProvider(call: AssistProviderCall): Promise<AssistCallResult> {
  const started = Date.now();
  const latency = () => Date.now() - started;
  const signal = AbortSignal.timeout(call.timeoutMs);
  const doFetch = call.fetch ?? fetch;
  let status: number;
  let raw: string;
  try {
    const response = await doFetch(chatCompletionsUrl(call.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${call.apiKey}` },
      body: JSON.stringify({
        model: call.model,
        messages: call.prompt.messages,
        temperature: 0,
        max_tokens: ASSIST_MAX_ANSWER_TOKENS,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'contract_suggestion', strict: true, schema: call.prompt.schema },
        },
      }),
      signal,
      redirect: 'error',
    });
    status = response.status;
    raw = await response.text();
  } catch (error) {
    const timedOut = signal.aborted || (error as Error)?.name === 'TimeoutError';
    return timedOut
      ? {
          ok: false,
          failure: 'timeout',
          detail: `The provider did not answer within ${call.timeoutMs} ms.`,
          tokensIn: null,
          tokensOut: null,
          latencyMs: latency(),
        }
      : {
          ok: false,
          failure: 'provider_down',
          detail: 'The provider could not be reached.',
          tokensIn: null,
          tokensOut: null,
          latencyMs: latency(),
        };
  }
  if (status < 200 || status >= 300) {
    return {
      ok: false,
      failure: 'provider_down',
      detail: `The provider answered HTTP ${status}.`,
      tokensIn: null,
      tokensOut: null,
      latencyMs: latency(),
    };
  }
  let body: { choices?: { message?: { content?: unknown } }[]; usage?: Record<string, unknown> };
  try {
    body = JSON.parse(raw) as typeof body;
  } catch {
    return invalidAnswer('The provider answer is not JSON.', null, null, latency());
  }
  const tokensIn = tokenCount(body?.usage?.prompt_tokens);
  const tokensOut = tokenCount(body?.usage?.completion_tokens);
  const content = body?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') {
    return invalidAnswer('The provider answer has no message content.', tokensIn, tokensOut, latency());
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return invalidAnswer('The model answer is not JSON.', tokensIn, tokensOut, latency());
  }
  const validate = ajv.compile(call.prompt.schema);
  const valid = validate(parsed);
  ajv.removeSchema(call.prompt.schema); // each prompt has its own schema; keep none of them
  if (!valid) {
    const first = validate.errors?.[0];
    return invalidAnswer(
      `The model answer does not match the answer schema (${first?.instancePath || '/'} ${first?.message ?? 'invalid'}).`,
      tokensIn,
      tokensOut,
      latency(),
    );
  }
  const answer = parsed as { contract_id: string | null; reason: string };
  return {
    ok: true,
    answer: { contractId: answer.contract_id, reason: answer.reason },
    tokensIn,
    tokensOut,
    latencyMs: latency(),
  };
}

function invalidAnswer(
  detail: string,
  tokensIn: number | null,
  tokensOut: number | null,
  latencyMs: number,
): AssistCallResult {
  return { ok: false, failure: 'invalid_answer', detail, tokensIn, tokensOut, latencyMs };
}
