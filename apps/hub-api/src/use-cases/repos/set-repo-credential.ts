import type { ParticipantActor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { COLLABORATOR_ROLES } from '../../domain/roles';
import { findRepoFor, repoNotFound } from '../../data/repos.lookups';
import type { RepoWithCredential } from '../../data/repos.lookups';
import { credentialFingerprint, repoCredentialProblem } from '../../domain/repo-credential-format';
import type { RepoCredentialKind } from '../../domain/repo-credential-format';

/**
 * Sets or rotates a repo's PAT or deploy key. Participants only (the contract refuses agents and keys);
 * they need the owner, admin or member role in the repo's workspace. The secret is sealed with the hub's
 * AES-256-GCM box, bound to the repo id as associated data, and never leaves this function in any other
 * form than its fingerprint: not in the response, not in a log line, not in the audit row.
 */
export async function setRepoCredential(
  deps: HubDeps,
  actor: ParticipantActor,
  repoId: string,
  input: { kind: RepoCredentialKind; secret: string; requestId?: string },
): Promise<RepoWithCredential> {
  await findRepoFor(deps.db, actor, repoId, COLLABORATOR_ROLES);
  const problem = repoCredentialProblem(input.kind, input.secret);
  if (problem) {
    throw new AppError({
      status: 400,
      code: 'repo_credential_invalid',
      detail: `The ${input.kind} is not acceptable: ${problem}.`,
      extra: { errors: [{ location: 'body/secret', message: problem }] },
    });
  }
  const fingerprint = credentialFingerprint(input.secret);
  const secretCiphertext = deps.box.seal(input.secret, repoId);
  const now = deps.now();
  await deps.db.$transaction(async (tx) => {
    // Serializes concurrent sets of one repo, so exactly one of them is the first "set".
    const locked = await tx.$queryRaw<{ workspace_id: string }[]>`
      SELECT workspace_id FROM repos WHERE id = ${repoId} FOR UPDATE`;
    const workspaceId = locked[0]?.workspace_id;
    if (!workspaceId) throw repoNotFound(repoId);
    const previous = await tx.repoCredential.findUnique({ where: { repoId } });
    if (previous) {
      await tx.repoCredential.update({
        where: { repoId },
        data: {
          kind: input.kind,
          secretCiphertext,
          fingerprint,
          setById: actor.participantId,
          rotatedAt: now,
        },
      });
    } else {
      await tx.repoCredential.create({
        data: {
          repoId,
          kind: input.kind,
          secretCiphertext,
          fingerprint,
          setById: actor.participantId,
          setAt: now,
        },
      });
    }
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: previous ? 'credential.repo.rotated' : 'credential.repo.set',
        targetType: 'repo',
        targetId: repoId,
        data: {
          kind: input.kind,
          fingerprint,
          ...(previous ? { previous_kind: previous.kind, previous_fingerprint: previous.fingerprint } : {}),
        },
        requestId: input.requestId,
      },
      tx,
    );
  });
  return findRepoFor(deps.db, actor, repoId);
}
