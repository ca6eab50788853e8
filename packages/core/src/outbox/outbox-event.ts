/** An event as the outbox stores it and a {@link Publisher} sends it. */
export interface OutboxEvent<P = unknown> {
  /** Unique id of the event: the deduplication identity every consumer's inbox records. */
  readonly eventId: string;
  /** Kind of entity the event belongs to, e.g. `order`. */
  readonly aggregateType: string;
  /** Id of that entity, e.g. `ord_8421`. */
  readonly aggregateId: string;
  /** Position of the event within its aggregate (1, 2, 3...): events of one aggregate are published in this order. */
  readonly aggregateSeq: number;
  /** What happened, e.g. `order.created.v1`. */
  readonly eventType: string;
  /** The event's JSON payload. */
  readonly payload: P;
  /** When the event was enqueued, by the outbox database's clock. */
  readonly createdAt: Date;
  /**
   * Message headers publishers carry beside the payload: the W3C `traceparent`/`tracestate` captured
   * at enqueue, and any the caller gave. Absent when there are none.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An event a relay has claimed: leased to that relay until it marks, reschedules or releases it. */
export interface ClaimedEvent<P = unknown> extends OutboxEvent<P> {
  /**
   * 1 for the first publish attempt. Every claim counts, including one whose relay crashed before it
   * could report back, so an event that crashes relays is dead-lettered too.
   */
  readonly attempt: number;
}

/** What `enqueue(tx, event)` takes. */
export interface NewOutboxEvent<P = unknown> {
  /** Default: a random UUID. Give your own to make the enqueue itself retry-safe. */
  readonly eventId?: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  /**
   * Default: assigned by the outbox (the aggregate's previous sequence + 1). Give your own (the
   * aggregate's version, say) and it must be higher than every sequence enqueued for the aggregate.
   */
  readonly aggregateSeq?: number;
  readonly eventType: string;
  /** Any JSON value; NaN, Infinity, BigInt, cycles and `undefined` are refused. */
  readonly payload: P;
  /**
   * Headers carried with the message (names: letters, digits, `-`, `_`, `.`; values: strings).
   * The outbox adds the active trace context (`traceparent`, `tracestate`) when OpenTelemetry is present.
   */
  readonly headers?: Readonly<Record<string, string>>;
}
