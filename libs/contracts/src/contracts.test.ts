import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import {
  loadSync,
  type MessageTypeDefinition,
  type MethodDefinition,
  type PackageDefinition,
} from '@grpc/proto-loader';
import { loaderOptions, packageDefinition, serviceNames, services } from './index.js';

// The test runs inside the repo, so it can read the .proto files the runtime lib must do without.
const protoDir = fileURLToPath(new URL('../../../proto/', import.meta.url));

async function parseProtos(): Promise<PackageDefinition> {
  assert.ok(existsSync(protoDir), `proto/ not found at ${protoDir}`);
  const files = (await readdir(protoDir, { recursive: true })).filter((f) => f.endsWith('.proto')).sort();
  assert.ok(files.length > 0);
  return loadSync(files, { ...loaderOptions, includeDirs: [protoDir] });
}

/** What matters about a method here; grpc-js's and proto-loader's method types both have it. */
type AnyMethod = Pick<MethodDefinition<object, object>, 'path' | 'requestStream' | 'responseStream'>;

function servicesOf(def: PackageDefinition): Map<string, Record<string, AnyMethod>> {
  const out = new Map<string, Record<string, AnyMethod>>();
  for (const [name, value] of Object.entries(def)) {
    if (!('format' in value) && !('type' in value && 'fileDescriptorProtos' in value)) {
      out.set(name, value);
    }
  }
  return out;
}

function shape(
  service: Record<string, AnyMethod>,
): Record<string, { path: string; requestStream: boolean; responseStream: boolean }> {
  return Object.fromEntries(
    Object.entries(service).map(([m, d]) => [
      m,
      { path: d.path, requestStream: d.requestStream, responseStream: d.responseStream },
    ]),
  );
}

test('the runtime definitions hold every service in proto/ with the same methods and streaming flags', async () => {
  const parsed = servicesOf(await parseProtos());
  const loaded = servicesOf(packageDefinition);
  assert.deepEqual([...loaded.keys()].sort(), [...parsed.keys()].sort());
  for (const [name, service] of parsed) {
    assert.deepEqual(shape(loaded.get(name) ?? {}), shape(service), name);
  }
  // Every service is exported by its short name, and named in serviceNames.
  assert.deepEqual(Object.values(serviceNames).sort(), [...parsed.keys()].sort());
  for (const [short, full] of Object.entries(serviceNames)) {
    const ctor = (services as Record<string, { service: Record<string, AnyMethod> } | undefined>)[short];
    assert.ok(ctor, `services.${short} is not exported`);
    assert.deepEqual(shape(ctor.service), shape(parsed.get(full) ?? {}), short);
  }
});

test('streaming flags are the ones the services are built around', () => {
  const streaming = new Set<string>();
  for (const [full, service] of servicesOf(packageDefinition)) {
    for (const [method, d] of Object.entries(service)) {
      if (d.requestStream || d.responseStream)
        streaming.add(`${full}.${method}:${d.requestStream ? 'in' : ''}${d.responseStream ? 'out' : ''}`);
    }
  }
  assert.deepEqual([...streaming].sort(), [
    'grpc.health.v1.Health.Watch:out',
    'switchboard.llm.v1.Llm.StreamComplete:out',
    'switchboard.whisper.v1.Whisper.Transcribe:in',
  ]);
});

test('messages keep snake_case names, longs as strings, oneof names, and encode as the .proto does', async () => {
  const parsed = await parseProtos();
  const msg = (def: PackageDefinition, name: string) => def[name] as MessageTypeDefinition<object, object>;
  // Checks only fields this test names, so adding fields to proto/ does not break it.
  const roundTrip = (name: string, value: object): Record<string, unknown> => {
    const bytes = msg(packageDefinition, name).serialize(value);
    assert.deepEqual(bytes, msg(parsed, name).serialize(value), `${name} encodes differently`);
    const decoded = msg(packageDefinition, name).deserialize(bytes) as Record<string, unknown>;
    assert.deepEqual(decoded, msg(parsed, name).deserialize(bytes), `${name} decodes differently`);
    return decoded;
  };

  const req = roundTrip('switchboard.llm.v1.CompleteRequest', {
    prompt: 'hi',
    max_tokens: 5,
    seed: '9007199254740993',
    stop: ['\n'],
  });
  assert.equal(req.max_tokens, 5);
  assert.equal(req.seed, '9007199254740993');
  assert.equal(req.model, '', 'defaults are filled in');
  assert.equal(req._seed, 'seed', 'proto3 optional presence is visible');
  assert.equal(req.top_p, undefined, 'an absent optional stays absent');

  const chunk = roundTrip('switchboard.llm.v1.CompleteChunk', { delta: 'x' });
  assert.equal(chunk.kind, 'delta');
  assert.equal(chunk.delta, 'x');
  assert.equal('done' in chunk, false);

  const upload = roundTrip('switchboard.whisper.v1.TranscribeChunk', { data: Buffer.from([1, 2, 3]) });
  assert.equal(upload.kind, 'data');
  assert.deepEqual(upload.data, Buffer.from([1, 2, 3]));

  const health = roundTrip('grpc.health.v1.HealthCheckResponse', { status: 'NOT_SERVING' });
  assert.equal(health.status, 'NOT_SERVING');
});
