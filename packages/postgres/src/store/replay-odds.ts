/** How much each call weighs: the score moves this share of the way to the latest call's outcome. */
const WEIGHT = 1 / 16;

/** Past this share of replays, reading first wins: it costs a first request one read and saves a replay about two reads' worth. */
const READ_FIRST_AT = 0.5;

/** Whether the recent calls of one mode were mostly replays of completed records. */
export interface ReplayOdds {
  /** Replays dominated lately: read the record first, and claim only when it is not completed. */
  readonly likely: boolean;
  /** Records one call's outcome: it replayed a completed record, or it did not. */
  record(replayed: boolean): void;
}

/** A moving share of replays, starting at none: a fresh store claims first, as a first request wants. */
export function replayOdds(): ReplayOdds {
  let score = 0;
  return {
    get likely() {
      return score >= READ_FIRST_AT;
    },
    record(replayed) {
      score += ((replayed ? 1 : 0) - score) * WEIGHT;
    },
  };
}
