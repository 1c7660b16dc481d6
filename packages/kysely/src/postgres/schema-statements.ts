import { sharedSchemaStatements } from '../dialect/shared-schema-statements.js';
import type { SchemaStatements } from '../dialect/types.js';
import { postgresColumnTypes } from './column-types.js';

/** PostgreSQL's schema changes: the shared SQL, as a migration runs in one transaction. */
export const postgresSchemaStatements: SchemaStatements = sharedSchemaStatements(postgresColumnTypes);
