import type { HttpReply } from './http-reply.js';
import { type Profile, problemReply } from './problem.js';

/** What a framework's body parser refused, as the contract answers it. */
export type BodyRefusal = 'malformed' | 'too-large' | 'unsupported';

/** The problem for a body the framework's parser refused, on a route with idempotency. */
export function bodyRefusalReply(refusal: BodyRefusal, profile: Profile, detail: string): HttpReply {
  switch (refusal) {
    case 'too-large':
      return problemReply('request-body-too-large', profile, detail);
    case 'unsupported':
      return problemReply('unsupported-request-body', profile, detail);
    case 'malformed':
      return problemReply('invalid-request-body', profile, detail);
  }
}
