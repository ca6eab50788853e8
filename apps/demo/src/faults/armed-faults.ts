import type { CrashPoint } from './crash.js';

/** A fault armed through `POST /v1/faults`: it fires at the next matching point of the background work. */
export type ArmRequest =
  | { readonly point: Extract<CrashPoint, 'relay-after-publish' | 'consumer-before-ack' | 'flow-after-charge'> }
  /** The card network fails every payment for `durationMs` (503, released so retries may execute). */
  | { readonly point: 'outage'; readonly durationMs: number };

/** The body, read. */
export type ArmCheck = { readonly kind: 'valid'; readonly request: ArmRequest } | { readonly kind: 'invalid'; readonly detail: string };

/** Validates `{ "point": "relay-after-publish" | "consumer-before-ack" }` or `{ "point": "outage", "duration_ms": n }`. */
export function checkArmRequest(body: unknown): ArmCheck {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (fields.point === 'relay-after-publish' || fields.point === 'consumer-before-ack' || fields.point === 'flow-after-charge') {
    return { kind: 'valid', request: { point: fields.point } };
  }
  if (fields.point === 'outage') {
    const ms = fields.duration_ms;
    if (typeof ms === 'number' && Number.isInteger(ms) && ms > 0 && ms <= 60_000) {
      return { kind: 'valid', request: { point: 'outage', durationMs: ms } };
    }
    return { kind: 'invalid', detail: 'duration_ms must be an integer between 1 and 60000.' };
  }
  return { kind: 'invalid', detail: 'point must be relay-after-publish, consumer-before-ack, flow-after-charge or outage.' };
}

/** Faults waiting to fire; each crash point fires once. */
export interface ArmedFaults {
  arm(request: ArmRequest): void;
  /** True once for an armed crash point, which it disarms. */
  take(point: Extract<CrashPoint, 'relay-after-publish' | 'consumer-before-ack' | 'flow-after-charge'>): boolean;
  /** True while an armed outage lasts. */
  outage(now: number): boolean;
}

/** Creates the fault registry; `now` is the clock outage windows are measured with. */
export function armedFaults(now: () => number = Date.now): ArmedFaults {
  const crashes = new Set<string>();
  let outageUntil = 0;
  return {
    arm(request) {
      if (request.point === 'outage') outageUntil = now() + request.durationMs;
      else crashes.add(request.point);
    },
    take(point) {
      return crashes.delete(point);
    },
    outage(at) {
      return at < outageUntil;
    },
  };
}
