/** The part of a Node `ServerResponse` this needs. */
interface NodeResponse {
  readonly writableFinished: boolean;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * A signal that aborts when the client disconnects before the response is finished. It reaches the
 * handler as `context.signal`; it never releases a claim by itself.
 */
export function closeSignal(res: NodeResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('oncely/http: the client closed the connection'));
  });
  return controller.signal;
}
