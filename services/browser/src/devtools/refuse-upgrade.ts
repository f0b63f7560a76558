import type { Duplex } from 'node:stream';
import { httpStatusOf, SwitchboardError } from '@switchboard/errors';

/** Answers a refused upgrade with the API's error body (`{"error": {code, message, request_id}}`), as the gateway passes it on. */
export function refuseUpgrade(
  socket: Duplex,
  error: unknown,
  requestId: string | string[] | undefined,
): void {
  const known = error instanceof SwitchboardError ? error : new SwitchboardError('internal');
  const body = JSON.stringify({
    error: {
      code: known.code,
      message: known.message,
      ...(typeof requestId === 'string' ? { request_id: requestId } : {}),
    },
  });
  socket.end(
    `HTTP/1.1 ${httpStatusOf(known.code)} ${known.code}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
