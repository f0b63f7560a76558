export {
  errorTable,
  errorCodes,
  isErrorCode,
  httpStatusOf,
  httpStatusForGrpc,
  codeForGrpcStatus,
  type ErrorCode,
} from './codes.js';
export { SwitchboardError, isSwitchboardError, type ErrorOptions } from './error.js';
export { toGrpcStatus, fromGrpcError, errorMetadataKeys } from './grpc-wire.js';
