import express from 'express';
import type { Router } from 'express';
import { z } from 'zod';
import { badRequest } from '@svc/service-kit';
import type { SecretBox } from '@svc/service-kit';
import { sessionOf } from '../auth/session';
import { clearedCookie, sealSession, sessionCookie } from '../domain/session-cookie';
import type { CookieSettings } from '../domain/session-cookie';
import { signIn } from '../use-cases/session/sign-in';

export interface SessionRouteDeps {
  hubUrl: string;
  box: SecretBox;
  cookie: CookieSettings;
}

const signInBody = z.object({
  email: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
});

/**
 * The session: `POST /session` signs in at the hub and sets the sealed cookie, `GET /session` says who is
 * signed in (null: nobody) and until when, `DELETE /session` signs out (removes the cookie). The token itself never reaches
 * the page.
 */
export function sessionRoutes(deps: SessionRouteDeps): Router {
  const router = express.Router();
  router.post('/session', express.json({ limit: '16kb' }), async (req, res) => {
    const parsed = signInBody.safeParse(req.body);
    if (!parsed.success) {
      throw badRequest('validation_failed', 'Sign in with an email and a password.', {
        errors: parsed.error.issues.map((issue) => ({
          location: `body/${issue.path.join('/')}`,
          message: issue.message,
        })),
      });
    }
    const signedIn = await signIn(deps.hubUrl, { ...parsed.data, clientAddress: req.ip });
    res.setHeader(
      'Set-Cookie',
      sessionCookie(deps.cookie, sealSession(deps.box, signedIn.session), signedIn.session),
    );
    res.status(200).json({
      data: {
        participant: signedIn.participant,
        expires_at: new Date(signedIn.session.expiresAt).toISOString(),
      },
    });
  });
  // Signed out is an answer, not a failure: `data` is null (so the page learns it without a 401).
  router.get('/session', (_req, res) => {
    const session = sessionOf(res);
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json({
      data: session
        ? { participant_id: session.participantId, expires_at: new Date(session.expiresAt).toISOString() }
        : null,
    });
  });
  router.delete('/session', (_req, res) => {
    res.setHeader('Set-Cookie', clearedCookie(deps.cookie));
    res.status(204).end();
  });
  return router;
}
