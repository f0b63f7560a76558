import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPI } from 'openapi-types';
import { repoRoot } from '../support/gateway.js';
import { startStack, type Stack } from '../support/stack.js';

// The document a real gateway serves is the contract's one source: it must be valid for the
// standard tools, and the typed client (libs/client) must be generated from exactly it.

let stack: Stack;
let served: OpenAPI.Document;
before(async () => {
  stack = await startStack();
  const res = await fetch(`${stack.gateway.url}/openapi.json`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  served = (await res.json()) as OpenAPI.Document;
});
after(() => stack?.stop());

test('the served /openapi.json validates as OpenAPI 3.1 with swagger-parser', async () => {
  // validate() dereferences the object it is given, so each call gets a copy.
  const validated = await SwaggerParser.validate(structuredClone(served));
  assert.equal('openapi' in validated && validated.openapi, '3.1.0');

  // The validator does reject a broken document (so the pass above means something): a $ref to
  // a schema that does not exist, and an operation whose responses are not an object.
  const dangling = structuredClone(served) as { components: { schemas: Record<string, unknown> } };
  delete dangling.components.schemas['Error'];
  await assert.rejects(
    SwaggerParser.validate(dangling as unknown as OpenAPI.Document),
    /Missing \$ref pointer "#\/components\/schemas\/Error"/,
  );
  const malformed = structuredClone(served) as { paths: Record<string, Record<string, unknown>> };
  const [firstPath] = Object.values(malformed.paths);
  const [method] = Object.keys(firstPath!).filter((key) => ['get', 'post'].includes(key));
  firstPath![method!] = { responses: 'none' };
  await assert.rejects(
    SwaggerParser.validate(malformed as unknown as OpenAPI.Document),
    /schema validation failed/,
  );
});

test('the served document is the one the typed client was generated from', () => {
  const committed = JSON.parse(
    readFileSync(join(repoRoot, 'libs', 'client', 'openapi.json'), 'utf8'),
  ) as unknown;
  assert.deepEqual(
    served,
    committed,
    'libs/client/openapi.json differs from what the gateway serves: run `pnpm client:gen`',
  );
});
