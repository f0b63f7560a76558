import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { after, before, beforeEach, describe, it } from 'node:test';
import { z } from 'zod';
import { loadConfig } from '@switchboard/config';
import { checkObjectStoreEnv, objectStoreConfigFrom, objectStoreEnvFields } from './env.js';
import { ObjectStoreError } from './object-store.js';
import { S3rver, type S3rverInstance } from './test-support.js';
import { S3ObjectStore } from './s3.js';
import { WebIdentityCredentials } from './web-identity.js';

const escapeXml = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;');

/**
 * An STS endpoint speaking AWS's wire protocol for `AssumeRoleWithWebIdentity` (form-encoded POST,
 * XML answer), which hands out s3rver's keys to the token it expects.
 */
class FakeSts {
  readonly calls: URLSearchParams[] = [];
  acceptedToken = 'token-1';
  lifetimeMs = 3_600_000;
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void buffer(req).then((body) => {
        const form = new URLSearchParams(body.toString());
        this.calls.push(form);
        res.setHeader('content-type', 'text/xml');
        if (
          req.method !== 'POST' ||
          form.get('Action') !== 'AssumeRoleWithWebIdentity' ||
          form.get('WebIdentityToken') !== this.acceptedToken
        ) {
          res.statusCode = 403;
          res.end(
            '<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>' +
              '<Message>Not authorized to perform sts:AssumeRoleWithWebIdentity</Message></Error></ErrorResponse>',
          );
          return;
        }
        const expiration = new Date(Date.now() + this.lifetimeMs).toISOString();
        res.end(
          '<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">' +
            '<AssumeRoleWithWebIdentityResult><Credentials>' +
            `<AccessKeyId>S3RVER</AccessKeyId><SecretAccessKey>S3RVER</SecretAccessKey>` +
            `<SessionToken>${escapeXml('session&token<1>')}</SessionToken><Expiration>${expiration}</Expiration>` +
            '</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>',
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe('S3 credentials from a service-account token (web identity)', () => {
  let dir: string;
  let tokenFile: string;
  let s3: S3rverInstance;
  let endpoint: string;
  const sts = new FakeSts();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-web-identity-'));
    tokenFile = join(dir, 'token');
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: join(dir, 's3') });
    endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
    await sts.start();
  });
  after(async () => {
    await s3.close();
    await sts.stop();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    sts.calls.length = 0;
    sts.acceptedToken = 'token-1';
    sts.lifetimeMs = 3_600_000;
    await writeFile(tokenFile, 'token-1\n');
  });

  const storeWith = (bucket: string) =>
    new S3ObjectStore({
      endpoint,
      accessKey: '',
      secretKey: '',
      webIdentity: {
        stsEndpoint: sts.url,
        tokenFile,
        roleArn: 'arn:aws:iam::1:role/sb',
        sessionName: 'sb-test',
      },
      bucket,
      region: 'us-east-1',
      retentionDays: {},
    });

  it('stores and reads objects with the keys STS gives for the token, exchanged once while they are fresh', async () => {
    const store = storeWith('sb-web-identity');
    await store.ensureReady();
    await store.put('images/a.png', Buffer.from('png bytes'), { contentType: 'image/png', metadata: {} });
    const stored = await store.get('images/a.png');
    assert.equal((await buffer(stored!.stream)).toString(), 'png bytes');
    assert.equal(sts.calls.length, 1);
    const call = sts.calls[0]!;
    assert.equal(call.get('Version'), '2011-06-15');
    assert.equal(call.get('RoleArn'), 'arn:aws:iam::1:role/sb');
    assert.equal(call.get('RoleSessionName'), 'sb-test');
    assert.equal(
      call.get('WebIdentityToken'),
      'token-1',
      'the trailing newline of the token file is dropped',
    );
  });

  it('exchanges again near expiry, reading the token kubelet rotated into the file', async () => {
    let now = Date.now();
    const provider = new WebIdentityCredentials(
      { stsEndpoint: sts.url, tokenFile, sessionName: 'sb-test' },
      () => now,
    );
    const first = await provider.getCredentials();
    assert.equal(first.getSessionToken(), 'session&token<1>');
    await writeFile(tokenFile, 'token-2');
    sts.acceptedToken = 'token-2';
    now += 3_600_000 - 4 * 60_000; // four minutes before expiry: inside the refresh margin
    await provider.getCredentials();
    assert.deepEqual(
      sts.calls.map((call) => call.get('WebIdentityToken')),
      ['token-1', 'token-2'],
    );
    assert.equal(sts.calls[1]!.has('RoleArn'), false, 'no RoleArn when none is configured (MinIO)');
  });

  it('concurrent requests share one exchange', async () => {
    const provider = new WebIdentityCredentials({ stsEndpoint: sts.url, tokenFile, sessionName: 'sb-test' });
    const all = await Promise.all(Array.from({ length: 8 }, () => provider.getCredentials()));
    assert.equal(sts.calls.length, 1);
    assert.ok(all.every((credentials) => credentials === all[0]));
  });

  it('a refused token fails the store call with STS’s code, and the next call tries again', async () => {
    await writeFile(tokenFile, 'stolen-token');
    const store = storeWith('sb-web-identity-refused');
    await assert.rejects(
      store.put('images/b.png', Buffer.from('x'), { contentType: 'image/png', metadata: {} }),
      (error) => {
        assert.ok(error instanceof ObjectStoreError);
        assert.match(String((error.cause as Error).message), /AccessDenied/);
        return true;
      },
    );
    await writeFile(tokenFile, 'token-1');
    await store.ensureReady();
    await store.put('images/b.png', Buffer.from('x'), { contentType: 'image/png', metadata: {} });
    assert.equal(sts.calls.length, 2);
  });
});

describe('object store variables for web identity', () => {
  const schema = z.object(objectStoreEnvFields).superRefine(checkObjectStoreEnv);
  const load = (env: Record<string, string>) => objectStoreConfigFrom(loadConfig(schema, env));

  it('needs the token file, refuses static keys beside it, and defaults STS to the region’s AWS endpoint', () => {
    assert.throws(
      () => load({ S3_ENDPOINT: 'https://s3.eu-west-1.amazonaws.com', S3_CREDENTIALS: 'web-identity' }),
      /AWS_WEB_IDENTITY_TOKEN_FILE: required with S3_CREDENTIALS=web-identity/,
    );
    assert.throws(
      () =>
        load({
          S3_ENDPOINT: 'https://s3.eu-west-1.amazonaws.com',
          S3_CREDENTIALS: 'web-identity',
          AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/token',
          S3_ACCESS_KEY: 'AKIA',
        }),
      /S3_ACCESS_KEY: not used with S3_CREDENTIALS=web-identity/,
    );
    const config = load({
      S3_ENDPOINT: 'https://s3.eu-west-1.amazonaws.com',
      S3_REGION: 'eu-west-1',
      S3_CREDENTIALS: 'web-identity',
      AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/token',
      AWS_ROLE_ARN: 'arn:aws:iam::1:role/sb',
    });
    assert.deepEqual(config.s3?.webIdentity, {
      stsEndpoint: 'https://sts.eu-west-1.amazonaws.com',
      tokenFile: '/var/run/secrets/token',
      roleArn: 'arn:aws:iam::1:role/sb',
      sessionName: 'switchboard',
    });
  });

  it('static keys stay the default, and still required', () => {
    assert.throws(
      () => load({ S3_ENDPOINT: 'http://minio:9000' }),
      /S3_ACCESS_KEY: required when S3_ENDPOINT is set/,
    );
    assert.equal(
      load({ S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY: 'a', S3_SECRET_KEY: 'b' }).s3?.webIdentity,
      undefined,
    );
  });
});
