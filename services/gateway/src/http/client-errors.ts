import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { SwitchboardError, type ErrorCode } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import { errorBody } from './errors.js';

/** How Node's HTTP parser refused a request, as status and code of ours. */
function refusal(code: string | undefined): { status: number; code: ErrorCode; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      // The request line counts too: an over-long URL lands here rather than as a 414.
      return {
        status: 431,
        code: 'invalid_request',
        message: 'The request line and header fields are too large.',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'payload_too_large', message: 'The chunk extensions are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'invalid_request', message: 'The request headers did not arrive in time.' };
    default:
      return { status: 400, code: 'invalid_request', message: 'The request is not valid HTTP.' };
  }
}

/**
 * Requests Node's HTTP server refuses before any handler sees them (header fields over
 * --max-http-header-size, malformed HTTP, headers past headersTimeout). Node's own answer is a
 * bare status line; this one is the JSON error every other answer has, with a request id in the
 * body, the `X-Request-Id` header and the log. The headers were not read, so the id is always a
 * new one and the dialect the plain one (the path is not known either).
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node does: answer only when no response of this connection has started, never twice.
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const { status, code, message } = refusal(error.code);
    logger.debug({ request_id: requestId, parser_code: error.code, status }, 'request refused by the parser');
    const body = JSON.stringify(errorBody(new SwitchboardError(code, { message }), requestId));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n' +
        `\r\n${body}`,
    );
    // The parser cannot go on after an error; the rest of the request is dropped with the socket.
    socket.destroy();
  });
}
