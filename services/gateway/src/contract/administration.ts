/**
 * /admin: the dashboard (a public page and its files) and /admin/api/..., with the admin token:
 * API keys, every key's animation jobs, force-closing any browser session, the cluster status.
 * The request schemas here are the ones admin/keys-routes.ts and admin/jobs-routes.ts validate.
 */
import { isCidr } from '@switchboard/config';
import {
  defaultTierPolicies,
  isSafeDisplayText,
  tiers,
  UNSAFE_DISPLAY_TEXT_MESSAGE,
} from '@switchboard/keys';
import { z } from 'zod';
import { jobFields } from './animation.js';
import { KeyQuotas } from './usage.js';
import { BrowserSessionStatus } from './browser-sessions.js';
import { adminErrors } from './responses.js';

const MB = 1_000_000;
const perTier = (read: (policy: (typeof defaultTierPolicies)[(typeof tiers)[number]]) => string) =>
  tiers.map((tier) => read(defaultTierPolicies[tier])).join(', ');

/** The tiers in rank order and their default limits, in words (the document's introduction too). */
export const tierSummary = `${tiers.join(' < ')}. Defaults — requests/minute: ${perTier((p) => String(p.requests_per_minute))}; browser sessions at once: ${perTier((p) => String(p.browser_sessions))}; upload limit: ${perTier((p) => `${p.upload_limit_bytes / MB} MB`)}; animation jobs at once: ${perTier((p) => String(p.animation_jobs))}; model calls at once, per capability: ${perTier((p) => String(p.model_calls))}.`;

export const Tier = z.enum(tiers).meta({ id: 'Tier', description: tierSummary });

// The characters are checked before trimming, so one at either end is refused, not dropped.
const name = z.string().refine(isSafeDisplayText, UNSAFE_DISPLAY_TEXT_MESSAGE).trim().min(1).max(100).meta({
  description:
    'A label for people: no control characters, unpaired surrogates or bidirectional formatting characters.',
});
const ipAllowlist = z
  .array(
    z
      .string()
      .refine(isCidr, 'expected an IPv4 or IPv6 CIDR')
      .meta({ description: 'An IPv4 or IPv6 CIDR (a bare address means one host).' }),
  )
  .max(100)
  .meta({
    description:
      "Client addresses the key may be used from; empty = everyone (the cluster's `IP_ALLOWLIST` applies first).",
  });
const rateLimit = z
  .number()
  .int()
  .min(1)
  .max(1_000_000_000)
  .nullable()
  .meta({ description: "Requests per minute, overriding the tier's; `null` = the tier's limit." });

// The store reads a missing allowlist as [] and a missing limit as null: the defaults say so.
export const CreateKeyRequest = z
  .object({
    name,
    tier: Tier,
    ip_allowlist: ipAllowlist.default([]),
    rate_limit_per_minute: rateLimit.default(null),
    quotas: KeyQuotas.default({}),
  })
  .meta({ id: 'CreateKeyRequest' });

export const UpdateKeyRequest = z
  .object({
    name: name.optional(),
    tier: Tier.optional(),
    ip_allowlist: ipAllowlist.optional(),
    rate_limit_per_minute: rateLimit.optional(),
    quotas: KeyQuotas.optional().meta({
      description:
        "Replaces the key's whole `quotas` object (as `ip_allowlist` is replaced); `{}` = the tier's quotas.",
    }),
  })
  .meta({ id: 'UpdateKeyRequest', description: 'Any of the fields; those left out keep their value.' });

export const RotateKeyRequest = z
  .object({
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(0)
      .meta({ description: 'How long the old secret keeps working.' }),
  })
  .meta({ id: 'RotateKeyRequest' });

const keyFields = {
  id: z.string(),
  name: z.string(),
  tier: Tier,
  ip_allowlist: z.array(z.string()),
  rate_limit_per_minute: z.number().int().nullable(),
  quotas: KeyQuotas,
  created_at: z.iso.datetime(),
};

export const ApiKey = z
  .object({
    ...keyFields,
    prefix: z.string().meta({ description: 'The start of the key (`sb_<key id>_`), to recognise it.' }),
    last_used_at: z.iso.datetime().nullable(),
    status: z.enum(['active', 'revoked']),
  })
  .meta({ id: 'ApiKey' });

export const ApiKeyList = z.object({ data: z.array(ApiKey) }).meta({ id: 'ApiKeyList' });

export const CreatedKey = z
  .object({
    ...keyFields,
    key: z.string().meta({
      description:
        'The API key, `sb_<key id>_<secret>`: shown only here. Only a hash of the secret is stored.',
    }),
  })
  .meta({ id: 'CreatedKey' });

export const RotatedKey = z
  .object({
    id: z.string(),
    key: z.string().meta({ description: 'The new API key, shown only here; it works at once.' }),
  })
  .meta({ id: 'RotatedKey' });

export const AdminJob = z
  .object({ ...jobFields, key_id: z.string().meta({ description: 'The id of the key that submitted it.' }) })
  .meta({ id: 'AdminJob', description: 'A job as its owner sees it, plus whose it is.' });

export const AdminJobList = z
  .object({
    data: z.array(AdminJob).meta({ description: 'Newest first.' }),
    has_more: z.boolean().meta({ description: 'Whether another page follows (ask with `after`).' }),
  })
  .meta({ id: 'AdminJobList' });

const WorkerReplica = z
  .object({
    address: z.string().meta({ description: '`ip:port` the worker name resolved to.' }),
    status: z.enum(['SERVING', 'NOT_SERVING', 'UNREACHABLE']).meta({
      description:
        "The replica's last `grpc.health.v1` answer (NOT_SERVING while it drains); UNREACHABLE when it cannot be reached, and until its first answer after being resolved.",
    }),
    in_flight: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Calls this gateway replica has open to it now.' }),
    served: z.number().int().min(0).meta({
      description: 'Calls this gateway replica has sent it since it was resolved, retries included.',
    }),
  })
  .meta({ id: 'WorkerReplica' });

export const ClusterStatus = z
  .object({
    workers: z.array(
      z.object({
        name: z.string(),
        address: z.string(),
        status: z.enum(['SERVING', 'NOT_SERVING', 'UNKNOWN', 'SERVICE_UNKNOWN', 'UNREACHABLE']).meta({
          description:
            '`grpc.health.v1` status: SERVING when any replica serves; SERVICE_UNKNOWN when the worker does not know its own service name.',
        }),
        replicas: z.array(WorkerReplica).meta({
          description:
            "Every replica the worker's address resolves to now, as this gateway routes over them (docs/scaling.md). Only llm, whisper and diffusion list theirs; browser and animation list none: new sessions go to the worker the session registry names, and animation workers pull their jobs.",
        }),
      }),
    ),
    browser: z
      .object({
        capacity: z.number().int().min(0).meta({
          description:
            'Sessions the live browser workers can run at once (the sum of their `BROWSER_MAX_SESSIONS`).',
        }),
        in_use: z.number().int().min(0).meta({ description: 'Sessions running on them now.' }),
        key_capacity_share: z.number().meta({ description: '`BROWSER_KEY_CAPACITY_SHARE`.' }),
        fair_share: z.number().int().min(1).meta({
          description:
            'max(1, ⌊share × capacity⌋): the most sessions a key takes while other keys wait for a browser.',
        }),
        sessions_by_key: z.record(z.string(), z.number().int().min(1)).meta({
          description:
            'Active sessions per owner key id, over the whole cluster; keys with none are left out.',
        }),
        waiting_keys: z.array(z.string()).meta({
          description:
            'Key ids turned away with `no_capacity` below their share within the last 30 s and not served since: while any is listed, keys at their fair share get no more sessions.',
        }),
      })
      .meta({ description: "The cluster's browsers and who holds them (docs/browser-sessions.md)." }),
    browser_sessions: z
      .array(
        z.object({
          session_id: z.uuid(),
          status: BrowserSessionStatus,
          created_at: z.iso.datetime(),
          current_url: z.string(),
          owner_key_id: z.string(),
        }),
      )
      .nullable()
      .meta({ description: '`null` when the browser worker cannot be reached.' }),
    animation_jobs: z.array(AdminJob).nullable().meta({
      description:
        'The 50 newest jobs of every key (the first page of `GET /admin/api/jobs?limit=50`); `null` when the job store cannot be read. Jobs are listed while no animation worker runs.',
    }),
  })
  .meta({ id: 'ClusterStatus' });

export const tag = 'Administration';
/** What every admin route declares alike: its tag and the admin token. */
export const adminSurface = { tag, auth: 'admin' } as const;
export const KeyPath = z.object({
  id: z.string().meta({ description: 'The API key id (the `<key id>` part of `sb_<key id>_<secret>`).' }),
});
/** Keys live in NATS: while it is away every key call is `503 unavailable` at once (admin/admin-routes.ts). */
export const keyStoreErrors = [...adminErrors, 'unavailable'] as const;
