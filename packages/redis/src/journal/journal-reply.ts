import { corruptRecord, type JournalEntry, type JournalRow, type JournalState, toJournalEntry } from '@oncely/core/adapter';

const STATES: ReadonlySet<string> = new Set<JournalState>(['pending', 'unknown', 'succeeded', 'failed']);

/** Reads a flat HGETALL reply (`field, value, ...`) into a journal entry; undefined when empty. */
export function toEntry(reply: unknown): JournalEntry | undefined {
  if (!Array.isArray(reply) || reply.length === 0) return undefined;
  const fields = new Map<string, string>();
  for (let index = 0; index + 1 < reply.length; index += 2) fields.set(String(reply[index]), String(reply[index + 1]));
  const state = fields.get('state');
  const number = (name: string) => {
    const value = Number(fields.get(name));
    if (!Number.isSafeInteger(value)) throw corruptRecord(`the journal entry's ${name} is not an integer`);
    return value;
  };
  if (state === undefined || !STATES.has(state)) throw corruptRecord(`the journal entry has an unknown state "${state}"`);
  const row: JournalRow = {
    operationId: fields.get('operation_id') ?? '',
    key: fields.get('key') ?? '',
    attempts: number('attempts'),
    state: state as JournalState,
    requestJson: fields.get('request'),
    dataJson: fields.get('data'),
    lastError: fields.get('last_error'),
    createdAt: number('created_at'),
    updatedAt: number('updated_at'),
  };
  return toJournalEntry(row);
}
