import { isConnectionLost, sqlState } from './sql-state.js';

/** One statement of a simple-protocol message that ran to its end, with the rows it returned. */
export interface ScriptStatement {
  /** The command tag's first word: `SELECT`, `BEGIN`, `COMMIT`, `ROLLBACK`, ... */
  readonly command: string;
  readonly rows: Record<string, unknown>[];
}

/**
 * What a message of several statements did: the statements that completed, in order, and the error
 * that stopped it (the statements after it did not run). Rows of the statements before the error are
 * kept, which the drivers' own multi-statement calls throw away.
 */
export interface ScriptOutcome {
  readonly statements: ScriptStatement[];
  readonly error?: unknown;
}

/** A text-format value of type `oid` as oncely reads it (bool; int8, int2, int4; float4, float8; else the text), whatever the driver's parsers. */
export function decodeText(oid: number, text: string | null): unknown {
  if (text === null) return null;
  // A switch, not Set lookups: this runs for every column of every row of the claim's reply.
  switch (oid) {
    case 16:
      return text === 't';
    case 20:
    case 21:
    case 23:
      return Number.parseInt(text, 10);
    case 700:
    case 701:
      return Number(text);
    default:
      return text;
  }
}

interface PgField {
  readonly name: string;
  readonly dataTypeID: number;
}

/** The part of pg's connection a submittable talks to. */
interface PgConnection {
  query(text: string): void;
}

/**
 * A pg "submittable" that sends `text` as one simple-protocol Query message and keeps each
 * statement's rows, even when a later statement fails. pg detaches it at the first error and holds
 * the next query until ReadyForQuery, so the connection's state is settled before anything follows.
 */
export class PgScript {
  private fields: readonly PgField[] = [];
  private rows: Record<string, unknown>[] = [];
  private readonly statements: ScriptStatement[] = [];
  private settle!: (outcome: ScriptOutcome) => void;
  private fail!: (error: unknown) => void;
  private settled = false;
  readonly outcome: Promise<ScriptOutcome>;

  constructor(readonly text: string) {
    this.outcome = new Promise((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
  }

  submit(connection: PgConnection): void {
    connection.query(this.text);
  }

  handleRowDescription(message: { fields: readonly PgField[] }): void {
    this.fields = message.fields;
    this.rows = [];
  }

  handleDataRow(message: { fields: readonly (string | null)[] }): void {
    const row: Record<string, unknown> = {};
    const { fields } = this;
    for (let index = 0; index < fields.length; index++) {
      const field = fields[index]!;
      row[field.name] = decodeText(field.dataTypeID, message.fields[index] ?? null);
    }
    this.rows.push(row);
  }

  handleCommandComplete(message: { text: string }): void {
    const { text } = message;
    const space = text.indexOf(' ');
    this.statements.push({ command: space < 0 ? text : text.slice(0, space), rows: this.rows });
    this.fields = [];
    this.rows = [];
  }

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: { sendCopyFail(message: string): void }): void {
    connection.sendCopyFail('oncely/postgres: COPY is not supported here');
  }

  handleCopyData(): void {}

  /** A server error stops the message (its statements before it stand); anything else means the connection is gone. */
  handleError(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (sqlState(error) !== undefined && !isConnectionLost(error)) this.settle({ statements: this.statements, error });
    else this.fail(error);
  }

  handleReadyForQuery(): void {
    if (this.settled) return;
    this.settled = true;
    this.settle({ statements: this.statements });
  }
}
