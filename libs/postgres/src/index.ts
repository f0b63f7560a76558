/**
 * @switchboard/postgres — a PostgreSQL database as the cluster's stores (usage, webhooks) use it.
 */
export { Database, type DatabaseOptions, type Queryable } from './database.js';
