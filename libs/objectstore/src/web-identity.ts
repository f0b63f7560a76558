import { readFile } from 'node:fs/promises';
import { CredentialProvider } from 'minio/dist/esm/CredentialProvider.mjs';
import { Credentials } from 'minio/dist/esm/Credentials.mjs';

/**
 * S3 credentials from the pod's identity instead of static keys: the service-account token that
 * Kubernetes projects into the pod is exchanged at an STS endpoint (`AssumeRoleWithWebIdentity`)
 * for short-lived keys. This is how EKS's IAM roles for service accounts work, and MinIO's STS
 * accepts the same call, so no access key ever sits in a Secret.
 */
export interface WebIdentityConfig {
  /** `https://sts.<region>.amazonaws.com` on AWS; MinIO serves STS on its own endpoint. */
  stsEndpoint: string;
  /** The projected token; re-read on every exchange, because kubelet rotates it. */
  tokenFile: string;
  /** The role to assume; MinIO may derive it from the token's claims, so it can be omitted there. */
  roleArn?: string;
  /** Names the session in the store's audit log. */
  sessionName: string;
}

/** Keys are exchanged again this long before they expire, so no request signs with stale ones. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const STS_TIMEOUT_MS = 10_000;

/** The text of the first `<name>` element; STS answers are small, fixed documents. */
function element(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return match?.[1]
    ?.replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&amp;', '&');
}

/** Thrown when the STS endpoint refuses the token or answers with something that is not keys. */
export class WebIdentityError extends Error {
  override readonly name = 'WebIdentityError';
}

export class WebIdentityCredentials extends CredentialProvider {
  private current: { credentials: Credentials; expiresAt: number } | undefined;
  /** One exchange at a time: concurrent requests wait for the same answer. */
  private pending: Promise<Credentials> | undefined;

  constructor(
    private readonly config: WebIdentityConfig,
    private readonly now: () => number = Date.now,
  ) {
    super({ accessKey: '', secretKey: '' });
  }

  override async getCredentials(): Promise<Credentials> {
    if (this.current && this.current.expiresAt - REFRESH_MARGIN_MS > this.now())
      return this.current.credentials;
    this.pending ??= this.exchange().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async exchange(): Promise<Credentials> {
    const token = (await readFile(this.config.tokenFile, 'utf8')).trim();
    const form = new URLSearchParams({
      Action: 'AssumeRoleWithWebIdentity',
      Version: '2011-06-15',
      WebIdentityToken: token,
      RoleSessionName: this.config.sessionName,
    });
    if (this.config.roleArn) form.set('RoleArn', this.config.roleArn);
    let response: Response;
    try {
      response = await fetch(this.config.stsEndpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
        signal: AbortSignal.timeout(STS_TIMEOUT_MS),
      });
    } catch (error) {
      throw new WebIdentityError(`STS endpoint unreachable: ${(error as Error).message}`, { cause: error });
    }
    const body = await response.text();
    if (!response.ok) {
      const code = element(body, 'Code') ?? `HTTP ${response.status}`;
      throw new WebIdentityError(
        `STS refused the service-account token: ${code}: ${element(body, 'Message') ?? ''}`,
      );
    }
    const accessKey = element(body, 'AccessKeyId');
    const secretKey = element(body, 'SecretAccessKey');
    const sessionToken = element(body, 'SessionToken');
    const expiresAt = Date.parse(element(body, 'Expiration') ?? '');
    if (!accessKey || !secretKey || !sessionToken || Number.isNaN(expiresAt))
      throw new WebIdentityError(
        'STS answer has no credentials (AccessKeyId, SecretAccessKey, SessionToken, Expiration)',
      );
    const credentials = new Credentials({ accessKey, secretKey, sessionToken });
    this.current = { credentials, expiresAt };
    return credentials;
  }
}
