import { once } from 'node:events';
import WebSocket from 'ws';

/** One message from the browser: an answer (`id`) or an event (`method`). Untyped CDP JSON. */
export interface CdpReply {
  id?: number;
  sessionId?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  method?: string;
  params?: Record<string, unknown>;
}

export interface CdpClient {
  ws: WebSocket;
  replies: CdpReply[];
  /** Sends a command and waits for its answer (15 s at most). */
  send(method: string, params?: object, sessionId?: string): Promise<CdpReply>;
  /** Waits for the first message that `match` accepts. */
  next(match: (reply: CdpReply) => boolean, timeoutMs?: number): Promise<CdpReply>;
  close(): void;
}

/** A raw CDP client (the `ws` package), as an attacker would write one. */
export async function cdpClient(url: string, headers: Record<string, string>): Promise<CdpClient> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  await once(ws, 'open');
  const replies: CdpReply[] = [];
  ws.on('message', (data: Buffer) => replies.push(JSON.parse(data.toString()) as CdpReply));
  let nextId = 0;
  const next = async (match: (reply: CdpReply) => boolean, timeoutMs = 15_000) => {
    for (const end = Date.now() + timeoutMs; Date.now() < end;) {
      const found = replies.find(match);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('no such CDP message in time');
  };
  return {
    ws,
    replies,
    next,
    send(method, params = {}, sessionId) {
      const id = ++nextId;
      ws.send(JSON.stringify({ id, method, params, sessionId }));
      return next((reply) => reply.id === id);
    },
    close: () => ws.close(),
  };
}
