/**
 * What a worker passes on to a program it runs for tenants (Chromium rendering their pages,
 * ffmpeg/ffprobe decoding their media): where programs are, the locale and the time zone, and
 * nothing else. A worker's own environment holds the cluster secret, NATS and Redis URLs with
 * their credentials, S3 and vendor keys; those children are what a tenant attacks first, and one
 * that is taken over reads its own `/proc/self/environ` (and, while the uid is the same, its
 * siblings'). So the list is an allow-list: a variable added to a worker later stays out unless it
 * is named here.
 */
export const CHILD_ENV_NAMES = ['PATH', 'LANG', 'LC_ALL', 'TZ'] as const;

/** PATH when the worker has none, so a binary named without a folder still resolves. */
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The whole environment of a child process: the allow-listed variables the worker has, plus the
 * child's `own` (HOME, for one) over them.
 */
export function childProcessEnv(
  own: Record<string, string> = {},
  source: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_PATH };
  for (const name of CHILD_ENV_NAMES) {
    const value = source[name];
    if (value) env[name] = value;
  }
  return { ...env, ...own };
}
