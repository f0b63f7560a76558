export {
  errorTable,
  errorCodes,
  isErrorCode,
  httpStatusOf,
  httpStatusForGrpc,
  codeForGrpcStatus,
  type ErrorCode,
} from './codes.js';
export {
  SwitchboardError,
  isSwitchboardError,
  dependencyUnavailable,
  DEPENDENCY_RETRY_AFTER_SECONDS,
  type ErrorOptions,
} from './error.js';
export { toGrpcStatus, fromGrpcError, errorMetadataKeys } from './grpc-wire.js';
