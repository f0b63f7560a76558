import { randomBytes } from 'node:crypto';

// Crockford's base32: no I, L, O or U, so ids read aloud and sort the same as strings and as numbers.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * 26 characters: 10 of milliseconds since the epoch then 16 of randomness (80 bits), as in a ULID.
 * Ids made later sort after earlier ones, which keeps whoever stores them (the webhook log) in
 * order and pageable by id alone.
 */
export function timeSortableId(now = Date.now()): string {
  let time = '';
  let ms = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[ms % 32]! + time;
    ms = Math.floor(ms / 32);
  }
  const random = randomBytes(16);
  let tail = '';
  for (const byte of random) tail += ALPHABET[byte % 32];
  return time + tail;
}

/** `evt_<time-sortable id>`: one id names the event wherever it goes (NATS, the webhook log, `webhook-id`). */
export function newEventId(now = Date.now()): string {
  return `evt_${timeSortableId(now)}`;
}

const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

export function isEventId(value: string): boolean {
  return EVENT_ID.test(value);
}
