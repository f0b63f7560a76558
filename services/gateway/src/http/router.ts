import { Router } from 'express';

/**
 * Every router of the gateway matches paths exactly as written: case-sensitive and strict about
 * a trailing slash. Express's defaults (`/Animate` and `/animate/` reach the `/animate` handler)
 * would let a spelling slip past a policy that looks at the path, such as the tier gate; with
 * exact matching such a variant reaches no handler and is a plain 404.
 */
export function exactRouter(): Router {
  return Router({ caseSensitive: true, strict: true });
}
