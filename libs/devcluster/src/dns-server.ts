import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';

export interface DnsServer {
  /** `127.0.0.1:<port>`, the form `dns.Resolver#setServers` takes. */
  address: string;
  /**
   * Replaces a name's addresses (`[]` keeps the name, answering NODATA) while the server runs: the
   * local runner's replicas join and leave their worker's name this way.
   */
  setRecords(name: string, addresses: string[]): void;
  close(): Promise<void>;
}

const typeA = 1;
const typeAAAA = 28;
const classIN = 1;
const rcode = { noError: 0, formErr: 1, nxDomain: 3, notImp: 4 } as const;

/**
 * A tiny authoritative DNS server on 127.0.0.1 (UDP, port 0) answering A and AAAA queries from
 * `records` (name → addresses, IPv4 and IPv6 mixed). Tests use it so that "a public-looking name
 * that resolves to loopback" is a real DNS answer rather than a stub. Unknown names get NXDOMAIN;
 * a known name without addresses of the asked type gets NOERROR with no answers (NODATA).
 */
export async function startDnsServer(records: Record<string, string[]>): Promise<DnsServer> {
  const zone = new Map<string, string[]>();
  const setRecords = (name: string, addresses: string[]) => {
    for (const address of addresses) {
      if (isIP(address) === 0) throw new Error(`startDnsServer: ${name} → "${address}" is not an IP address`);
    }
    zone.set(canonicalName(name), [...addresses]);
  };
  for (const [name, addresses] of Object.entries(records)) setRecords(name, addresses);

  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    const reply = answer(query, zone);
    // A lost reply is what UDP allows; the client retries.
    if (reply !== null) socket.send(reply, peer.port, peer.address, () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  socket.on('error', () => undefined);

  return {
    address: `127.0.0.1:${socket.address().port}`,
    setRecords,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function canonicalName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

interface Question {
  name: string;
  type: number;
  class: number;
  /** Offset just past the question, so it can be echoed byte for byte (case included). */
  end: number;
}

/** The reply to one datagram, or null for one not worth answering (too short, or itself a reply). */
function answer(query: Buffer, zone: Map<string, string[]>): Buffer | null {
  if (query.length < 12) return null;
  const id = query.readUInt16BE(0);
  const flags = query.readUInt16BE(2);
  if ((flags & 0x8000) !== 0) return null;
  const opcode = (flags >> 11) & 0xf;
  const recursionDesired = flags & 0x0100;
  const header = (code: number, questions: number, answers: number): Buffer => {
    const out = Buffer.alloc(12);
    out.writeUInt16BE(id, 0);
    // QR, the query's opcode, AA (this server owns the names), RD echoed, RA, and the result.
    out.writeUInt16BE(0x8000 | (opcode << 11) | 0x0400 | recursionDesired | 0x0080 | code, 2);
    out.writeUInt16BE(questions, 4);
    out.writeUInt16BE(answers, 6);
    return out;
  };

  if (opcode !== 0) return header(rcode.notImp, 0, 0);
  if (query.readUInt16BE(4) !== 1) return header(rcode.formErr, 0, 0);
  const question = readQuestion(query, 12);
  if (question === null) return header(rcode.formErr, 0, 0);
  const echoed = query.subarray(12, question.end);

  const addresses = zone.get(question.name);
  if (addresses === undefined) return Buffer.concat([header(rcode.nxDomain, 1, 0), echoed]);
  const wanted =
    question.class !== classIN ? 0 : question.type === typeA ? 4 : question.type === typeAAAA ? 6 : 0;
  const records = addresses
    .filter((address) => isIP(address) === wanted)
    .map((address) => resourceRecord(address));
  return Buffer.concat([header(rcode.noError, 1, records.length), echoed, ...records]);
}

/** RFC 1035 §4.1.2: labels, then QTYPE and QCLASS. Queries carry no compression pointers. */
function readQuestion(message: Buffer, start: number): Question | null {
  const labels: string[] = [];
  let offset = start;
  for (;;) {
    const length = message[offset];
    if (length === undefined || length > 63) return null;
    offset += 1;
    if (length === 0) break;
    if (offset + length > message.length) return null;
    labels.push(message.toString('latin1', offset, offset + length));
    offset += length;
    if (offset - start > 255) return null;
  }
  if (offset + 4 > message.length) return null;
  return {
    name: labels.join('.').toLowerCase(),
    type: message.readUInt16BE(offset),
    class: message.readUInt16BE(offset + 2),
    end: offset + 4,
  };
}

/** An answer for the question's name (a pointer to offset 12), TTL 0 so resolvers never cache it. */
function resourceRecord(address: string): Buffer {
  const data = isIP(address) === 4 ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(0xc00c, 0);
  fixed.writeUInt16BE(data.length === 4 ? typeA : typeAAAA, 2);
  fixed.writeUInt16BE(classIN, 4);
  fixed.writeUInt32BE(0, 6);
  fixed.writeUInt16BE(data.length, 10);
  return Buffer.concat([fixed, data]);
}

/** The 16 bytes of a valid IPv6 literal: `::` expanded, a dotted IPv4 tail read as two groups. */
function ipv6Bytes(address: string): Buffer {
  const withoutZone = address.split('%')[0] ?? '';
  const groupsOf = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [parseInt(group, 16)];
      const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const [head = '', tail] = withoutZone.split('::');
  const before = groupsOf(head);
  const after = tail === undefined ? [] : groupsOf(tail);
  const groups = [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = Buffer.alloc(16);
  groups.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  return bytes;
}
