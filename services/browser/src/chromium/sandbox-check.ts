import { readdir, readFile, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@switchboard/telemetry';
import { chromiumEnv } from './chromium-env.js';
import { launchChromium, type ChromiumProcess } from './chromium-process.js';
import {
  ChromiumSandboxError,
  resolveChromiumUser,
  type ChromiumIsolation,
  type ChromiumUser,
} from './chromium-user.js';
import { chromiumFlags } from './launch-flags.js';
import { PROFILE_PREFIX } from './pooled-browser.js';
import { checkProfileRootReachable, createProfileDir } from './profile-dir.js';

export interface SandboxOptions {
  chromiumPath: string;
  profileRoot: string;
  /** BROWSER_CHROMIUM_USER: whom Chromium runs as when the worker is root. */
  userName: string;
  /** BROWSER_CHROMIUM_SANDBOX: false is the operator's explicit opt-out. */
  sandbox: boolean;
  logger: Logger;
}

/** How long the probe's renderer may take to come up and lock itself down. */
const PROBE_TIMEOUT_MS = 10_000;
/** The probe loads nothing but about:blank, so its proxy flag names a port nothing listens on. */
const UNUSED_PROXY_PORT = 9;
const SECCOMP_FILTER = 2;

const FIX =
  'run the worker as an unprivileged user (or as root with BROWSER_CHROMIUM_USER naming an unprivileged ' +
  'user) on a kernel that lets unprivileged users create user namespaces, in a container whose seccomp and ' +
  'AppArmor profiles allow that (docs/security.md, "Chromium\'s sandbox"); or set BROWSER_CHROMIUM_SANDBOX=false ' +
  'to run Chromium without its sandbox, knowingly';

/**
 * Decides, once at start-up, how every Chromium of this worker runs, and fails closed: unless the
 * operator opted out, one probe Chromium is launched as sessions' are (same user, environment and
 * sandbox flags), and the worker starts only once a renderer of it (where tenants' pages run) is
 * seen under seccomp-bpf (`Seccomp: 2` in /proc/<pid>/status; Chromium's namespace sandbox
 * installs that filter in each renderer after moving it into user, PID and network namespaces of
 * its own). A machine where the sandbox cannot work makes Chromium exit at start-up instead, and
 * the worker refuses to start naming the fix. With the opt-out Chromium gets `--no-sandbox`, and
 * every start says so.
 */
export async function prepareChromiumIsolation(options: SandboxOptions): Promise<ChromiumIsolation> {
  const user = await resolveChromiumUser(options.userName);
  if (user) await checkProfileRootReachable(options.profileRoot, user);
  const isolation: ChromiumIsolation = { user, sandbox: options.sandbox };
  if (!options.sandbox) {
    options.logger.warn(
      { chromium_user: user?.name ?? 'the worker' },
      "Chromium's sandbox is OFF (BROWSER_CHROMIUM_SANDBOX=false): tenants' pages run in renderers with neither seccomp-bpf nor namespaces of their own (docs/security.md)",
    );
    return isolation;
  }
  await probeSandbox(options.chromiumPath, options.profileRoot, user);
  options.logger.info({ chromium_user: user?.name ?? 'the worker' }, "Chromium's sandbox is on");
  return isolation;
}

async function probeSandbox(chromiumPath: string, profileRoot: string, user: ChromiumUser | undefined) {
  const profileDir = await createProfileDir(profileRoot, `${PROFILE_PREFIX}${process.pid}-`, user);
  let chromium: ChromiumProcess | undefined;
  try {
    chromium = await launchChromium(
      chromiumPath,
      chromiumFlags({ profileDir, proxyPort: UNUSED_PROXY_PORT, sandbox: true }),
      { env: chromiumEnv(profileDir), user },
    );
    await waitForSandboxedRenderer(profileDir, chromium);
  } catch (error) {
    throw new ChromiumSandboxError(
      `Chromium's sandbox does not work here (${(error as Error).message}): ${FIX}.`,
    );
  } finally {
    await chromium?.stop(0);
    await rm(profileDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}

async function waitForSandboxedRenderer(profileDir: string, chromium: ChromiumProcess): Promise<void> {
  for (const end = Date.now() + PROBE_TIMEOUT_MS; Date.now() < end;) {
    if (chromium.hasExited) throw new Error('Chromium exited before a renderer started');
    if ((await rendererSeccompModes(profileDir)).includes(SECCOMP_FILTER)) return;
    await sleep(50);
  }
  throw new Error(`no renderer ran under seccomp-bpf within ${PROBE_TIMEOUT_MS / 1000} s`);
}

/**
 * The seccomp mode of every renderer of the browser whose profile is `profileDir` (Chromium passes
 * `--user-data-dir` on to its children). status and cmdline are world-readable, so a worker that is
 * not root reads them too, across the renderers' user namespaces.
 */
async function rendererSeccompModes(profileDir: string): Promise<number[]> {
  const modes: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (!hasArg(cmdline, '--type=renderer') || !hasArg(cmdline, `--user-data-dir=${profileDir}`)) continue;
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      modes.push(Number(/^Seccomp:\s*(\d+)/m.exec(status)?.[1] ?? NaN));
    } catch {
      // gone meanwhile
    }
  }
  return modes;
}

/**
 * Whether a /proc cmdline holds `arg`. Chromium's zygote children rewrite theirs as one
 * space-separated string, so arguments end at a NUL, a space or the end.
 */
function hasArg(cmdline: string, arg: string): boolean {
  return cmdline.split(/[\0 ]/).includes(arg);
}
