// The fake D-ID Talks API as a process, for the local cluster and manual runs:
//   node test/dist/support/fake-d-id-main.js [--port N] [--key KEY]
// Listens on 127.0.0.1 (a free port unless --port), prints one line
//   fake D-ID listening on http://127.0.0.1:<port> key=<key>
// for the starter to read (AVATAR_BASE_URL / AVATAR_API_KEY), and stops on SIGTERM or SIGINT.
import { parseArgs } from 'node:util';
import { startFakeDid } from './fake-d-id.js';

const { values } = parseArgs({
  options: { port: { type: 'string' }, key: { type: 'string' } },
  strict: true,
});
const port = values.port === undefined ? 0 : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be an integer 0-65535, got ${values.port}`);
  process.exit(2);
}

const fake = await startFakeDid({ port, apiKey: values.key });
console.log(`fake D-ID listening on ${fake.url} key=${fake.apiKey}`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  fake.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error('fake D-ID did not close cleanly', error);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
