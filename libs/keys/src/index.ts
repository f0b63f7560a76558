export { parseApiKey, formatApiKey, isKeyId, type ParsedApiKey } from './format.js';
export { KEY_PEPPER_MIN_LENGTH, PEPPERED_ALG } from './secret-hash.js';
export {
  tiers,
  type Tier,
  type TierPolicy,
  type TierPolicies,
  defaultTierPolicies,
  tierRank,
} from './tiers.js';
export { type KeyStatus, type KeyRecord, type StoredSecret, type PublicKeyView } from './record.js';
export {
  normalizeCidr,
  isSafeDisplayText,
  UNSAFE_DISPLAY_TEXT_MESSAGE,
  GRACE_SECONDS_MAX,
  type CreateKeyInput,
  type KeyPatch,
} from './validate.js';
export { KeyStore, DEFAULT_BUCKET, type KeyStoreOptions, type IssuedKey } from './store.js';
export { watchBucket, type BucketWatch } from './watch.js';
