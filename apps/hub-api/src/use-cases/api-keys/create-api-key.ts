import type { ParticipantActor } from '@svc/auth';
import { generateApiKey, isScopePreset, parseScopes, SCOPE_PRESETS } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';

export interface CreateApiKeyInput {
  name: string;
  preset?: string;
  scopes?: string[];
  expiresAt?: string;
  requestId?: string;
}

/**
 * Creates a workspace API key from a preset or an explicit scope list. Only the prefix and a SHA-256 of the
 * secret are stored; the full key is returned to the caller once.
 */
export async function createApiKey(
  deps: HubDeps,
  actor: ParticipantActor,
  workspaceId: string,
  input: CreateApiKeyInput,
) {
  if ((input.preset === undefined) === (input.scopes === undefined)) {
    throw new AppError({
      status: 400,
      code: 'preset_or_scopes_required',
      detail: 'Give exactly one of preset or scopes.',
    });
  }
  let scopes: string[];
  if (input.preset !== undefined) {
    if (!isScopePreset(input.preset)) {
      throw new AppError({
        status: 400,
        code: 'unknown_preset',
        detail: `Unknown preset '${input.preset}'.`,
      });
    }
    scopes = [...SCOPE_PRESETS[input.preset]];
  } else {
    const parsed = parseScopes(input.scopes);
    if ('unknown' in parsed) {
      throw new AppError({
        status: 400,
        code: 'unknown_scopes',
        detail: `Unknown scopes: ${parsed.unknown.join(', ')}.`,
        extra: { unknown_scopes: parsed.unknown },
      });
    }
    scopes = parsed.scopes;
  }
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
  if (expiresAt && expiresAt <= deps.now()) {
    throw new AppError({ status: 400, code: 'expiry_in_past', detail: 'expires_at must be in the future.' });
  }
  const generated = generateApiKey();
  const record = await deps.db.$transaction(async (tx) => {
    const created = await tx.apiKey.create({
      data: {
        id: newId('key'),
        workspaceId,
        name: input.name,
        prefix: generated.prefix,
        secretHash: generated.secretHash,
        scopes,
        preset: input.preset ?? null,
        createdById: actor.participantId,
        expiresAt,
      },
    });
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'api_key.created',
        targetType: 'api_key',
        targetId: created.id,
        data: {
          name: created.name,
          prefix: created.prefix,
          scopes,
          preset: created.preset,
          expires_at: expiresAt?.toISOString() ?? null,
        },
        requestId: input.requestId,
      },
      tx,
    );
    return created;
  });
  return { record, key: generated.key };
}
