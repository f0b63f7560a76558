// What the animation workers say about their back-ends, kept in a KV bucket: the gateway lists
// it under /models and refuses avatar jobs while the vendor is not configured — and since the
// entry outlives the worker, it can still say so while workers are scaled to zero.
import type { KV } from 'nats';
import { z } from 'zod';
import { backendNames, type BackendName } from './names.js';

const description = z.object({
  backend: z.enum(backendNames),
  configured: z.boolean(),
  models: z.array(
    z.object({
      id: z.string(),
      status: z.enum(['loading', 'ready', 'failed']),
      is_default: z.boolean(),
      description: z.string(),
      // Added later: entries written by older workers lack them.
      development: z.boolean().default(false),
      dtype: z.string().default(''),
    }),
  ),
  native_width: z.number().int().optional(),
  native_height: z.number().int().optional(),
  updated_at: z.string(),
});

export type BackendDescription = z.infer<typeof description>;

export async function publishBackendDescription(kv: KV, value: BackendDescription): Promise<void> {
  await kv.put(value.backend, new TextEncoder().encode(JSON.stringify(description.parse(value))));
}

export async function readBackendCatalogue(kv: KV): Promise<Map<BackendName, BackendDescription>> {
  const out = new Map<BackendName, BackendDescription>();
  for (const backend of backendNames) {
    const entry = await kv.get(backend);
    if (!entry || entry.operation !== 'PUT' || entry.value.length === 0) continue;
    const parsed = description.safeParse(JSON.parse(new TextDecoder().decode(entry.value)));
    if (parsed.success) out.set(backend, parsed.data);
  }
  return out;
}
