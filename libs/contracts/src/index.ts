/**
 * @switchboard/contracts — the only TypeScript view of proto/.
 *
 *   import { contracts, Llm, serviceNames, type CompleteRequest } from '@switchboard/contracts';
 *
 * Values
 *   contracts              the grpc object for all of proto/ (grpc.loadPackageDefinition), typed;
 *                          e.g. contracts.switchboard.llm.v1.Llm
 *   Health, Llm, Whisper, Diffusion, Browser
 *                          service client constructors: `new Llm(addr, creds)` (or createClient
 *                          from @switchboard/grpc); `Llm.service` is the definition a server adds
 *   services               those six by short name: services.Llm === Llm
 *   serviceNames           fully-qualified service names ('switchboard.llm.v1.Llm'), for health
 *   packageDefinition      the proto-loader PackageDefinition the above are built from
 *   loaderOptions          the options it was loaded with (identical to the types' generation)
 * Types (generated, re-exported flat, named after the proto message)
 *   X                      a message as you send it (permissive: optional fields, longs as
 *                          number | string | Long)
 *   X__Output              a message as you receive it (defaults filled in, longs as string,
 *                          enums as strings, oneof name in its own field, snake_case names)
 *   <Svc>Client            client instance type; <Svc>Handlers server implementation type;
 *   <Svc>Definition        service definition type; ProtoGrpcType the type of `contracts`
 *   ServiceTypes           { [short name]: { client, definition, handlers } } for generic code
 *   ServiceClientConstructor<N>  the type of services[N]
 *
 * Definitions are loaded from generated/descriptor.json, not from .proto files, so a deployed
 * copy of this package alone is enough. Regenerate with `npm run proto:gen` after editing proto/.
 */
import { type Client as grpcClient, loadPackageDefinition as grpcLoadPackageDefinition } from '@grpc/grpc-js';
import { fromJSON, type PackageDefinition } from '@grpc/proto-loader';
import descriptor from './generated/descriptor.json' with { type: 'json' };
import { loaderOptions, type ProtoGrpcType, type ServiceTypes } from './generated/index.js';

export * from './generated/index.js';

/** Parsed once per process: cheap, but every service's clients and servers share one copy. */
export const packageDefinition: PackageDefinition = fromJSON(descriptor as Parameters<typeof fromJSON>[0], {
  ...loaderOptions,
});

/** The grpc object for all of proto/; the cast is the one place the generated types meet runtime. */
export const contracts = grpcLoadPackageDefinition(packageDefinition) as unknown as ProtoGrpcType;

export const Health = contracts.grpc.health.v1.Health;
export const Llm = contracts.switchboard.llm.v1.Llm;
export const Whisper = contracts.switchboard.whisper.v1.Whisper;
export const Diffusion = contracts.switchboard.diffusion.v1.Diffusion;
export const Browser = contracts.switchboard.browser.v1.Browser;

/** A service's client constructor: `new C(address, credentials)`, with `C.service` its definition. */
export type ServiceClientConstructor<N extends keyof ServiceTypes = keyof ServiceTypes> = (new (
  ...args: ConstructorParameters<typeof grpcClient>
) => ServiceTypes[N]['client']) & { service: ServiceTypes[N]['definition'] };

/**
 * The constructors by short name (the keys of serviceNames), for code that treats services alike.
 * `satisfies` makes a service added to proto/ but not here a compile error.
 */
export const services = { Health, Llm, Whisper, Diffusion, Browser } as const satisfies {
  [N in keyof ServiceTypes]: ServiceClientConstructor<N>;
};
export { requestLimits } from './limits.js';
export { sessionDetails } from './session-details.js';
