export * from './meters.js';
export * from './quotas.js';
export * from './store.js';
export * from './postgres-store.js';
export * from './buckets.js';
