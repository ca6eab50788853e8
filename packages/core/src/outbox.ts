// `@oncely/core/outbox`: the transactional outbox and the inbox as users see them, and the relay between them.
export type { InboxEvent, InboxInput, InboxOutcome, Inbox, PurgeProcessedInput } from './inbox/inbox.js';
export type { Outbox } from './outbox/outbox.js';
export type { ClaimedEvent, NewOutboxEvent, OutboxEvent } from './outbox/outbox-event.js';
export type { OutboxSource, OutboxStats } from './outbox/outbox-source.js';
export type { PublishOutcome, Publisher } from './outbox/publisher.js';
export { createRelay, type Relay, type RelayBatch, type RelayStatus } from './outbox/relay.js';
export type { RelayEvent, RelayEventSubject, RelayStage } from './outbox/relay-events.js';
export type { PurgeOptions, RelayOptions } from './outbox/relay-options.js';
