/** The part of a Node `ServerResponse` this needs. */
interface NodeResponse {
  readonly writableFinished: boolean;
  readonly closed?: boolean;
  once(event: 'close', listener: () => void): unknown;
}

const CLIENT_GONE = () => new Error('oncely/http: the client closed the connection');

/**
 * A signal that aborts when the client disconnects before the response is finished. It reaches the
 * handler as `context.signal`, and is built only when the handler reads that (an AbortController
 * and a listener on every request cost more than most handlers' work); it never releases a claim.
 */
export class CloseSignal {
  readonly #res: NodeResponse;
  #signal: AbortSignal | undefined;

  constructor(res: NodeResponse) {
    this.#res = res;
  }

  get signal(): AbortSignal {
    if (this.#signal) return this.#signal;
    const res = this.#res;
    const controller = new AbortController();
    this.#signal = controller.signal;
    // Built late: a connection that closed before is seen here, one that closes later by the event.
    if (res.closed && !res.writableFinished) controller.abort(CLIENT_GONE());
    else {
      res.once('close', () => {
        if (!res.writableFinished) controller.abort(CLIENT_GONE());
      });
    }
    return this.#signal;
  }
}
