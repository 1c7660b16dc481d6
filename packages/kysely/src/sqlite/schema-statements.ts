import { sharedSchemaStatements } from '../dialect/shared-schema-statements.js';
import type { SchemaStatements } from '../dialect/types.js';
import { sqliteColumnTypes } from './column-types.js';

/** SQLite's schema changes: the shared SQL, as its DDL is transactional. */
export const sqliteSchemaStatements: SchemaStatements = sharedSchemaStatements(sqliteColumnTypes);
