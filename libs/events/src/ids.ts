import { randomBytes } from 'node:crypto';

// Crockford's base32: no I, L, O or U, so ids read aloud and sort the same as strings and as numbers.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The latest id's millisecond and random digits (0–31 each), to order ids made within one. */
let last = { ms: -1, digits: [] as number[] };

/**
 * 26 characters: 10 of milliseconds since the epoch then 16 of randomness (80 bits), as in a ULID.
 * Ids made later sort after earlier ones, which keeps whoever stores them (the webhook log) in
 * order and pageable by id alone. Within one millisecond, a process's next id is its previous one
 * plus one (a ULID's monotonic rule), so its ids keep the order they were made in; ids of two
 * processes in the same millisecond are ordered at random.
 */
export function timeSortableId(now = Date.now()): string {
  const digits = (now === last.ms && incremented(last.digits)) || randomDigits();
  last = { ms: now, digits };
  let time = '';
  let ms = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[ms % 32]! + time;
    ms = Math.floor(ms / 32);
  }
  return time + digits.map((d) => ALPHABET[d]).join('');
}

function randomDigits(): number[] {
  return [...randomBytes(16)].map((byte) => byte % 32);
}

/** `digits` plus one, in base 32; undefined when it would overflow (then the id starts afresh). */
function incremented(digits: readonly number[]): number[] | undefined {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]!++;
      return next;
    }
    next[i] = 0;
  }
  return undefined;
}

/** `evt_<time-sortable id>`: one id names the event wherever it goes (NATS, the webhook log, `webhook-id`). */
export function newEventId(now = Date.now()): string {
  return `evt_${timeSortableId(now)}`;
}

const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

export function isEventId(value: string): boolean {
  return EVENT_ID.test(value);
}
