// How `npm start` shows the services' log lines: readable and coloured on a terminal (pino-pretty),
// untouched JSON when the output goes to a file or another program.
import PinoPretty from 'pino-pretty';

export type LineFormatter = (service: string, line: string) => string;

/** `[service] line`, with pino's JSON lines pretty-printed when `pretty`. */
export function lineFormatter(pretty: boolean): LineFormatter {
  if (!pretty) return (service, line) => `[${service}] ${line}`;
  const prettify = PinoPretty.prettyFactory({
    colorize: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
  });
  return (service, line) => {
    if (!line.startsWith('{')) return `[${service}] ${line}`;
    try {
      return `[${service}] ${prettify(JSON.parse(line) as object).trimEnd()}`;
    } catch {
      return `[${service}] ${line}`; // not JSON after all: as it came
    }
  };
}
