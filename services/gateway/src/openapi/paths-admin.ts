/** API.md §7 (administration) and §8 (operations: probes and these docs). */
import { jobListParameters, jobProperties, jobRequired } from './paths-animate.js';
import {
  adminErrors,
  errorResponses,
  json,
  jsonBody,
  jsonBodyErrors,
  parameterRef,
  ref,
  security,
  success,
  type Content,
  type Paths,
  type Schemas,
} from './components.js';

const name = { type: 'string', minLength: 1, maxLength: 100, description: 'A label for people.' };
const ipAllowlist = {
  type: 'array',
  items: { type: 'string', description: 'An IPv4 or IPv6 CIDR (a bare address means one host).' },
  description:
    "Client addresses the key may be used from; empty = everyone (the cluster's `IP_ALLOWLIST` applies first).",
};
const rateLimit = {
  type: ['integer', 'null'],
  minimum: 1,
  description: "Requests per minute, overriding the tier's; `null` = the tier's limit.",
};

export const adminSchemas: Schemas = {
  Tier: {
    type: 'string',
    enum: ['basic', 'professional', 'enterprise'],
    description:
      'basic < professional < enterprise. Defaults — requests/minute: 60, 600, 6000; browser sessions at once: 2, 10, 50; upload limit: 25 MB, 100 MB, 500 MB; animation jobs at once: 0, 2, 10.',
  },
  ApiKey: {
    type: 'object',
    required: [
      'id',
      'name',
      'tier',
      'ip_allowlist',
      'rate_limit_per_minute',
      'created_at',
      'prefix',
      'last_used_at',
      'status',
    ],
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      tier: ref('Tier'),
      ip_allowlist: { type: 'array', items: { type: 'string' } },
      rate_limit_per_minute: { type: ['integer', 'null'] },
      created_at: { type: 'string', format: 'date-time' },
      prefix: { type: 'string', description: 'The start of the key (`sb_<key id>_`), to recognise it.' },
      last_used_at: { type: ['string', 'null'], format: 'date-time' },
      status: { type: 'string', enum: ['active', 'revoked'] },
    },
  },
  ApiKeyList: {
    type: 'object',
    required: ['data'],
    properties: { data: { type: 'array', items: ref('ApiKey') } },
  },
  CreateKeyRequest: {
    type: 'object',
    required: ['name', 'tier'],
    properties: {
      name,
      tier: ref('Tier'),
      ip_allowlist: { ...ipAllowlist, default: [] },
      rate_limit_per_minute: { ...rateLimit, default: null },
    },
  },
  CreatedKey: {
    type: 'object',
    required: ['id', 'key', 'name', 'tier', 'ip_allowlist', 'rate_limit_per_minute', 'created_at'],
    properties: {
      id: { type: 'string' },
      key: {
        type: 'string',
        description:
          'The API key, `sb_<key id>_<secret>`: shown only here. Only a hash of the secret is stored.',
      },
      name: { type: 'string' },
      tier: ref('Tier'),
      ip_allowlist: { type: 'array', items: { type: 'string' } },
      rate_limit_per_minute: { type: ['integer', 'null'] },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
  UpdateKeyRequest: {
    type: 'object',
    description: 'Any of the fields; those left out keep their value.',
    properties: { name, tier: ref('Tier'), ip_allowlist: ipAllowlist, rate_limit_per_minute: rateLimit },
  },
  RotateKeyRequest: {
    type: 'object',
    properties: {
      grace_seconds: {
        type: 'integer',
        minimum: 0,
        maximum: 86400,
        default: 0,
        description: 'How long the old secret keeps working.',
      },
    },
  },
  RotatedKey: {
    type: 'object',
    required: ['id', 'key'],
    properties: {
      id: { type: 'string' },
      key: { type: 'string', description: 'The new API key, shown only here; it works at once.' },
    },
  },
  AdminJob: {
    type: 'object',
    description: 'A job as its owner sees it, plus whose it is.',
    required: [...jobRequired, 'key_id'],
    properties: {
      ...jobProperties,
      key_id: { type: 'string', description: 'The id of the key that submitted it.' },
    },
  },
  AdminJobList: {
    type: 'object',
    required: ['data', 'has_more'],
    properties: {
      data: { type: 'array', items: ref('AdminJob'), description: 'Newest first.' },
      has_more: { type: 'boolean', description: 'Whether another page follows (ask with `after`).' },
    },
  },
  ClusterStatus: {
    type: 'object',
    required: ['workers', 'browser_sessions', 'animation_jobs'],
    properties: {
      workers: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'address', 'status'],
          properties: {
            name: { type: 'string' },
            address: { type: 'string' },
            status: {
              type: 'string',
              enum: ['SERVING', 'NOT_SERVING', 'UNREACHABLE'],
              description: '`grpc.health.v1` status.',
            },
          },
        },
      },
      browser_sessions: {
        description: '`null` when the browser worker cannot be reached.',
        oneOf: [
          {
            type: 'array',
            items: {
              type: 'object',
              required: ['session_id', 'status', 'created_at', 'current_url', 'owner_key_id'],
              properties: {
                session_id: { type: 'string', format: 'uuid' },
                status: ref('BrowserSessionStatus'),
                created_at: { type: 'string', format: 'date-time' },
                current_url: { type: 'string' },
                owner_key_id: { type: 'string' },
              },
            },
          },
          { type: 'null' },
        ],
      },
      animation_jobs: {
        description:
          'The 50 newest jobs of every key (the first page of `GET /admin/api/jobs?limit=50`); `null` when the job store cannot be read. Jobs are listed while no animation worker runs.',
        oneOf: [{ type: 'array', items: ref('AdminJob') }, { type: 'null' }],
      },
    },
  },
  Health: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } },
  Readiness: {
    type: 'object',
    required: ['status', 'checks'],
    properties: {
      status: { type: 'string', enum: ['ready', 'degraded', 'unavailable'] },
      checks: {
        type: 'object',
        properties: { key_store: { type: 'string' }, rate_limit_store: { type: 'string' } },
      },
    },
  },
};

const adminTag = ['Administration'];
const opsTag = ['Operations'];
const html: Content = { 'text/html; charset=utf-8': { schema: { type: 'string' } } };

export const adminPaths: Paths = {
  '/admin/api/keys': {
    post: {
      operationId: 'createKey',
      tags: adminTag,
      security: security.admin,
      summary: 'Create an API key',
      requestBody: jsonBody('CreateKeyRequest'),
      responses: {
        201: success(
          'admin',
          'The key, with its secret (`key`) shown only this once.',
          json(ref('CreatedKey')),
        ),
        ...errorResponses('admin', [...adminErrors, ...jsonBodyErrors]),
      },
    },
    get: {
      operationId: 'listKeys',
      tags: adminTag,
      security: security.admin,
      summary: 'List API keys',
      responses: {
        200: success('admin', 'Every key, without secrets.', json(ref('ApiKeyList'))),
        ...errorResponses('admin', adminErrors),
      },
    },
  },
  '/admin/api/keys/{id}': {
    patch: {
      operationId: 'updateKey',
      tags: adminTag,
      security: security.admin,
      summary: 'Edit an API key',
      parameters: [parameterRef('KeyId')],
      requestBody: jsonBody('UpdateKeyRequest'),
      responses: {
        200: success('admin', 'The key.', json(ref('ApiKey'))),
        ...errorResponses('admin', [...adminErrors, ...jsonBodyErrors, 'not_found']),
      },
    },
    delete: {
      operationId: 'revokeKey',
      tags: adminTag,
      security: security.admin,
      summary: 'Revoke an API key',
      description: 'The key is refused everywhere within 2 s.',
      parameters: [parameterRef('KeyId')],
      responses: {
        204: success('admin', 'Revoked.'),
        ...errorResponses('admin', [...adminErrors, 'not_found']),
      },
    },
  },
  '/admin/api/keys/{id}/rotate': {
    post: {
      operationId: 'rotateKey',
      tags: adminTag,
      security: security.admin,
      summary: 'Rotate the secret of an API key',
      description:
        'The new secret works at once; the old one stops after `grace_seconds`. The key id (and so session ownership) stays.',
      parameters: [parameterRef('KeyId')],
      requestBody: { ...jsonBody('RotateKeyRequest'), required: false },
      responses: {
        200: success('admin', 'The new key, shown only this once.', json(ref('RotatedKey'))),
        ...errorResponses('admin', [...adminErrors, ...jsonBodyErrors, 'not_found']),
      },
    },
  },
  '/admin/api/jobs': {
    get: {
      operationId: 'listAllJobs',
      tags: adminTag,
      security: security.admin,
      summary: 'List the animation jobs of every key',
      description:
        'Newest first, a page at a time: pass the last `job_id` of a page as `after` for the next.',
      parameters: jobListParameters,
      responses: {
        200: success('admin', 'A page of jobs.', json(ref('AdminJobList'))),
        ...errorResponses('admin', [...adminErrors, 'invalid_request', 'unavailable']),
      },
    },
  },
  '/admin/api/jobs/{job_id}': {
    delete: {
      operationId: 'cancelAnyJob',
      tags: adminTag,
      security: security.admin,
      summary: "Cancel any key's animation job",
      description:
        "As the owner's cancel: a queued job at once, a running one within 2 s; `animate.job.canceled` is published. A job that already finished → `409 job_finished`.",
      parameters: [
        {
          name: 'job_id',
          in: 'path',
          required: true,
          description: 'The job id, of any key.',
          schema: { type: 'string', pattern: '^job-' },
        },
      ],
      responses: {
        200: success('admin', 'The job, canceled.', json(ref('AdminJob'))),
        ...errorResponses('admin', [...adminErrors, 'job_not_found', 'job_finished', 'unavailable']),
      },
    },
  },
  '/admin/api/status': {
    get: {
      operationId: 'clusterStatus',
      tags: adminTag,
      security: security.admin,
      summary: 'Cluster status',
      description:
        "Each worker's health, live browser sessions and animation jobs (what the dashboard shows).",
      responses: {
        200: success('admin', 'The status.', json(ref('ClusterStatus'))),
        ...errorResponses('admin', adminErrors),
      },
    },
  },
  '/admin': {
    get: {
      operationId: 'adminDashboard',
      tags: adminTag,
      security: security.public,
      summary: 'Admin dashboard (web page)',
      description:
        'A page to create, edit, rotate and revoke keys and to see live browser sessions, animation jobs and worker health. The page holds no data: it asks for the admin token and sends it on its own calls.',
      responses: { 200: success('public', 'The page.', html) },
    },
  },
  '/healthz': {
    get: {
      operationId: 'healthz',
      tags: opsTag,
      security: security.public,
      summary: 'Liveness',
      description: 'Checks no dependency.',
      responses: { 200: success('public', 'The process is alive.', json(ref('Health'))) },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readyz',
      tags: opsTag,
      security: security.public,
      summary: 'Readiness',
      description:
        'Ready when the key store and the rate-limit store are reachable; a lost rate-limit store is reported as `degraded`.',
      responses: {
        200: success('public', 'Ready (or degraded).', json(ref('Readiness'))),
        503: success('public', 'Not ready: the key store is unreachable.', json(ref('Readiness'))),
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openapi',
      tags: opsTag,
      security: security.public,
      summary: 'This OpenAPI 3.1 document',
      responses: { 200: success('public', 'The document.', json({ type: 'object' })) },
    },
  },
  '/docs': {
    get: {
      operationId: 'docs',
      tags: opsTag,
      security: security.public,
      summary: 'This documentation (web page)',
      responses: { 200: success('public', 'The page, rendered from `/openapi.json`.', html) },
    },
  },
};
