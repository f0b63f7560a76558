import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { test } from 'node:test';
import { startDnsServer } from './dns-server.js';

const records = {
  'Public-Looking.Example': ['127.0.0.1'],
  'dual.example.': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '::1', '::ffff:10.0.0.1'],
  'v6only.example': ['fd00::1'],
};

async function withResolver(run: (resolver: dns.Resolver) => Promise<void>): Promise<void> {
  const server = await startDnsServer(records);
  try {
    assert.match(server.address, /^127\.0\.0\.1:\d+$/);
    const resolver = new dns.Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([server.address]);
    await run(resolver);
  } finally {
    await server.close();
  }
}

test('answers A and AAAA from the records, names case-insensitively', () =>
  withResolver(async (resolver) => {
    assert.deepEqual(await resolver.resolve4('public-looking.example'), ['127.0.0.1']);
    assert.deepEqual(await resolver.resolve4('DUAL.example'), ['93.184.215.14']);
    assert.deepEqual(await resolver.resolve6('dual.example'), [
      '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
      '::1',
      '::ffff:10.0.0.1',
    ]);
    assert.deepEqual(await resolver.resolve6('v6only.example'), ['fd00::1']);
  }));

test('an unknown name is NXDOMAIN; a known name without that type is NODATA', () =>
  withResolver(async (resolver) => {
    await assert.rejects(resolver.resolve4('nowhere.example'), { code: 'ENOTFOUND' });
    await assert.rejects(resolver.resolve6('public-looking.example'), { code: 'ENODATA' });
    await assert.rejects(resolver.resolve4('v6only.example'), { code: 'ENODATA' });
  }));

test('raw replies: id and question echoed, authoritative; other opcodes are NOTIMP', async () => {
  const server = await startDnsServer(records);
  const client = createSocket('udp4');
  try {
    const [host = '', portText = ''] = server.address.split(':');
    const ask = (message: Buffer): Promise<Buffer> =>
      new Promise((resolve) => {
        client.once('message', resolve);
        client.send(message, Number(portText), host);
      });
    const name = Buffer.from([6, ...Buffer.from('PUBLIC'), 7, ...Buffer.from('looking'), 0]);
    const fixedQuestion = Buffer.from([0, 1, 0, 1]); // A, IN
    const query = Buffer.concat([
      Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]),
      name,
      fixedQuestion,
    ]);

    const missing = await ask(query);
    assert.equal(missing.readUInt16BE(0), 0x1234);
    assert.equal(missing.readUInt16BE(2) & 0x8400, 0x8400, 'QR and AA set');
    assert.equal(missing.readUInt16BE(2) & 0xf, 3, 'NXDOMAIN for public.looking');
    assert.deepEqual(missing.subarray(12), Buffer.concat([name, fixedQuestion]), 'question echoed as sent');

    const status = Buffer.from(query);
    status.writeUInt16BE(0x1000, 2); // opcode 2 (STATUS)
    const notImplemented = await ask(status);
    assert.equal(notImplemented.readUInt16BE(2) & 0xf, 4);
    assert.equal(notImplemented.length, 12);
  } finally {
    client.close();
    await server.close();
  }
});

test('refuses records that are not IP addresses', async () => {
  await assert.rejects(startDnsServer({ 'a.example': ['not-an-ip'] }), /not an IP address/);
});
