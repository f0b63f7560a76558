export {
  OWNER_KEY_ID_METADATA,
  InvalidObjectKeyError,
  ObjectStoreError,
  validateKey,
  type ByteRange,
  type GetOptions,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type ReadyReport,
  type StoredObject,
} from './object-store.js';
export {
  SCREENSHOTS_PREFIX,
  newImageId,
  imageKey,
  videoKey,
  posterKey,
  captureFileName,
  screenshotKey,
  inputKey,
  inputPrefix,
  imageKeyOfFile,
  videoKeyOfFile,
  screenshotKeyOfFile,
  pdfFileName,
  pdfKey,
  pdfKeyOfFile,
  type AnimationInputField,
} from './layout.js';
export { LocalObjectStore } from './local.js';
export { S3ObjectStore, lifecycleConfig, type S3StoreConfig } from './s3.js';
export { WebIdentityCredentials, WebIdentityError, type WebIdentityConfig } from './web-identity.js';
export { createObjectStore, defaultRetentionDays, type ObjectStoreConfig } from './create.js';
export { objectStoreEnvFields, checkObjectStoreEnv, objectStoreConfigFrom } from './env.js';
