import { childProcessEnv } from '@switchboard/config';

/**
 * Chromium's whole environment: the allow-listed variables every child of a worker gets (never
 * the worker's secrets: Chromium runs tenants' pages) and HOME, which is the browser's own profile
 * directory. So whatever Chromium and the libraries it loads keep under HOME (fontconfig's cache,
 * NSS's database, the Debian launcher's crash-report folder) is written by Chromium's user into a
 * folder it owns, and goes with the profile. Headless Chromium needs no DISPLAY, D-Bus or
 * XDG_RUNTIME_DIR.
 */
export function chromiumEnv(profileDir: string): Record<string, string> {
  return childProcessEnv({ HOME: profileDir });
}
