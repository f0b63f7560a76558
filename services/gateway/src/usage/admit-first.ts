import type { RequestHandler, Response } from 'express';
import type { RouteDeps } from '../http/route.js';
import type { AdmitRequest, MeteredCall } from './metering.js';
import { meteringOf } from './metering-of.js';

const admitted = new WeakMap<Response, MeteredCall>();

/**
 * A body reader that admits the call against the key's quotas first: for routes whose worker
 * call starts while the body is still being read (uploads streamed to the worker), so refused
 * work never reaches a worker. The handler takes the call with admittedCall().
 */
export function admitFirst(
  reader: (deps: RouteDeps) => RequestHandler,
  request: (deps: RouteDeps) => AdmitRequest,
): (deps: RouteDeps) => RequestHandler {
  return (deps) => {
    const read = reader(deps);
    return (req, res, next) => {
      meteringOf(deps)
        .admit(res, request(deps))
        .then((call) => {
          admitted.set(res, call);
          read(req, res, next);
        }, next);
    };
  };
}

export function admittedCall(res: Response): MeteredCall {
  const call = admitted.get(res);
  if (!call) throw new Error('the call was not admitted: its route reads the body without admitFirst');
  return call;
}
