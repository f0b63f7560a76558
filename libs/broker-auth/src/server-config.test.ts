import assert from 'node:assert/strict';
import { test } from 'node:test';
import { natsPermissions } from './nats-permissions.js';
import { defaultResources, natsRoles } from './resources.js';
import { natsAuthorization, redisAclFile } from './server-config.js';

/** Whether a NATS subject pattern (with * and >) covers `subject`. */
function covers(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

test('only the gateway may touch the key store, and nobody may subscribe to events', () => {
  const keySubjects = [
    `$KV.${defaultResources.keysBucket}.abc`,
    `$JS.API.STREAM.INFO.KV_${defaultResources.keysBucket}`,
    `$JS.API.DIRECT.GET.KV_${defaultResources.keysBucket}.$KV.${defaultResources.keysBucket}.abc`,
    `$JS.API.CONSUMER.CREATE.KV_${defaultResources.keysBucket}`,
  ];
  for (const role of natsRoles) {
    const { publish, subscribe } = natsPermissions(role, defaultResources);
    for (const subject of keySubjects) {
      assert.equal(
        publish.allow.some((p) => covers(p, subject)),
        role === 'gateway',
        `${role} → ${subject}`,
      );
    }
    assert.ok(!subscribe.allow.some((p) => covers(p, `${defaultResources.eventsPrefix}.browser.x`)));
    assert.ok(!subscribe.allow.some((p) => covers(p, '_INBOX.abc')), `${role} reads the shared inbox`);
    assert.deepEqual(subscribe.allow, [`_INBOX_${role}.>`]);
  }
});

test('only the webhook sender reads the events stream, and it publishes no event', () => {
  const stream = defaultResources.eventsStream;
  const reading = [
    `$JS.API.STREAM.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.webhooks`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.webhooks`,
    `$JS.ACK.${stream}.webhooks.1.2.3.4.5`,
  ];
  const destroying = [
    `$JS.API.STREAM.DELETE.${stream}`,
    `$JS.API.STREAM.PURGE.${stream}`,
    `$JS.API.CONSUMER.DELETE.${stream}.webhooks`,
  ];
  for (const role of natsRoles) {
    const { publish } = natsPermissions(role, defaultResources);
    const allowed = (subject: string) => publish.allow.some((p) => covers(p, subject));
    for (const subject of reading)
      assert.equal(allowed(subject), role === 'webhooks', `${role} → ${subject}`);
    for (const subject of destroying) assert.ok(!allowed(subject), `${role} → ${subject}`);
    assert.equal(
      allowed(`${defaultResources.eventsPrefix}.animate.job.queued`),
      role !== 'webhooks',
      `${role} publishes events`,
    );
  }
  const webhooks = natsPermissions('webhooks', defaultResources).publish.allow;
  for (const subject of [
    `$KV.${defaultResources.jobBuckets[0]}.x`,
    `${defaultResources.jobsSubjectPrefix}.portrait`,
  ]) {
    assert.ok(!webhooks.some((p) => covers(p, subject)), subject);
  }
});

test("nats-server's users carry their permissions; the operator's none", () => {
  const config = natsAuthorization(
    [
      { role: 'browser', user: 'browser', password: 'b' },
      { role: 'operator', user: 'operator', password: 'o' },
    ],
    defaultResources,
  );
  assert.deepEqual(config.authorization.users, [
    { user: 'browser', password: 'b', permissions: natsPermissions('browser', defaultResources) },
    { user: 'operator', password: 'o' },
  ]);
});

test('the Redis ACL file turns the default user off and stores no password in the clear', () => {
  const file = redisAclFile(
    [
      { role: 'gateway', user: 'gateway', password: 'gateway-password' },
      { role: 'operator', user: 'operator', password: 'operator-password' },
    ],
    { gateway: 'sb:' },
  );
  const lines = file.trim().split('\n');
  assert.equal(lines[0], 'user default off resetkeys resetchannels -@all');
  assert.match(
    lines[1]!,
    /^user gateway on #[0-9a-f]{64} resetkeys ~sb:\* resetchannels -@all .*-@dangerous \+info \+time$/,
  );
  assert.match(lines[2]!, /^user operator on #[0-9a-f]{64} ~\* &\* \+@all$/);
  assert.ok(!file.includes('password'));
});
