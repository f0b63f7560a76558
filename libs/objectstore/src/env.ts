import { z } from 'zod';
import { env } from '@switchboard/config';
import { defaultRetentionDays, type ObjectStoreConfig } from './create.js';

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.pathname === '/';
  } catch {
    return false;
  }
}

/** S3 lifecycle retention: key prefix → days (`{"screenshots/": 7}` by default: screenshots kept 7 days). */
const retentionDays = z.record(z.string().min(1), z.number().int().min(1).max(36_500));

/**
 * The object store's variables, the same in every process that reads or writes it (gateway,
 * browser, diffusion, animation), so one chart block configures them all.
 */
export const objectStoreEnvFields = {
  S3_ENDPOINT: z
    .string()
    .refine(isHttpUrl, 'expected an http or https URL without a path (no bucket in it)')
    .optional()
    .describe(
      'MinIO/S3 endpoint, an http(s) URL without a path (no bucket in it); unset = stored files go to the local folder OBJECT_STORE_DIR.',
    ),
  S3_CREDENTIALS: z
    .enum(['keys', 'web-identity'])
    .default('keys')
    .describe(
      "How the S3 client authenticates: keys (S3_ACCESS_KEY and S3_SECRET_KEY), or web-identity (the pod's projected service-account token, AWS_WEB_IDENTITY_TOKEN_FILE, exchanged at S3_STS_ENDPOINT for short-lived keys: EKS IAM roles for service accounts, or MinIO's STS).",
    ),
  S3_ACCESS_KEY: z
    .string()
    .optional()
    .describe('S3 access key; required when S3_ENDPOINT is set with S3_CREDENTIALS=keys.'),
  S3_SECRET_KEY: z
    .string()
    .optional()
    .describe('S3 secret key; required when S3_ENDPOINT is set with S3_CREDENTIALS=keys.'),
  S3_STS_ENDPOINT: z
    .string()
    .refine(isHttpUrl, 'expected an http or https URL without a path')
    .optional()
    .describe(
      'STS endpoint that exchanges the service-account token (S3_CREDENTIALS=web-identity); unset = https://sts.<S3_REGION>.amazonaws.com.',
    ),
  AWS_WEB_IDENTITY_TOKEN_FILE: z
    .string()
    .optional()
    .describe(
      "Path of the projected service-account token (S3_CREDENTIALS=web-identity); EKS's pod identity webhook sets it. Read again at every exchange, since kubelet rotates it.",
    ),
  AWS_ROLE_ARN: z
    .string()
    .optional()
    .describe('Role the token assumes (S3_CREDENTIALS=web-identity); required by AWS, optional for MinIO.'),
  AWS_ROLE_SESSION_NAME: z
    .string()
    .regex(/^[\w+=,.@-]{2,64}$/, 'expected 2-64 characters of [A-Za-z0-9_+=,.@-]')
    .default('switchboard')
    .describe("Session name of the assumed role, seen in the store's audit log."),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name')
    .default('switchboard')
    .describe('Bucket of every stored file (screenshots, images, videos, uploads); created when absent.'),
  S3_REGION: z.string().default('us-east-1').describe('Region of the bucket.'),
  S3_RETENTION_DAYS: env
    .json(retentionDays, JSON.stringify(defaultRetentionDays))
    .describe(
      'JSON object, key prefix → days to keep objects under it (browser screenshots: 7 by default); applied as bucket lifecycle rules.',
    ),
  OBJECT_STORE_DIR: z
    .string()
    .default('./.run/objects')
    .describe(
      'Folder stored files go to when S3_ENDPOINT is unset (processes that share files share the folder).',
    ),
};

type ObjectStoreEnv = z.infer<z.ZodObject<typeof objectStoreEnvFields>>;

/**
 * For a schema's superRefine: once an endpoint is set, the chosen credentials are required, and
 * static keys beside web-identity are refused (they would be silently unused).
 */
export function checkObjectStoreEnv(e: ObjectStoreEnv, ctx: z.RefinementCtx): void {
  if (e.S3_ENDPOINT === undefined) return;
  const webIdentity = e.S3_CREDENTIALS === 'web-identity';
  for (const name of ['S3_ACCESS_KEY', 'S3_SECRET_KEY'] as const) {
    if (!webIdentity && e[name] === undefined)
      ctx.addIssue({ code: 'custom', path: [name], message: 'required when S3_ENDPOINT is set' });
    if (webIdentity && e[name] !== undefined)
      ctx.addIssue({ code: 'custom', path: [name], message: 'not used with S3_CREDENTIALS=web-identity' });
  }
  if (webIdentity && e.AWS_WEB_IDENTITY_TOKEN_FILE === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['AWS_WEB_IDENTITY_TOKEN_FILE'],
      message: 'required with S3_CREDENTIALS=web-identity (the projected service-account token)',
    });
}

export function objectStoreConfigFrom(e: ObjectStoreEnv): ObjectStoreConfig {
  return {
    s3:
      e.S3_ENDPOINT !== undefined
        ? {
            endpoint: e.S3_ENDPOINT,
            accessKey: e.S3_ACCESS_KEY ?? '',
            secretKey: e.S3_SECRET_KEY ?? '',
            webIdentity:
              e.S3_CREDENTIALS === 'web-identity'
                ? {
                    stsEndpoint: e.S3_STS_ENDPOINT ?? `https://sts.${e.S3_REGION}.amazonaws.com`,
                    tokenFile: e.AWS_WEB_IDENTITY_TOKEN_FILE ?? '',
                    roleArn: e.AWS_ROLE_ARN,
                    sessionName: e.AWS_ROLE_SESSION_NAME,
                  }
                : undefined,
            bucket: e.S3_BUCKET,
            region: e.S3_REGION,
          }
        : undefined,
    directory: e.OBJECT_STORE_DIR,
    retentionDays: e.S3_RETENTION_DAYS,
  };
}
