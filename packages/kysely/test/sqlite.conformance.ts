import { runConformance } from '@cairn/conformance';
import { sqlHarness } from './support/harness.js';

// The whole conformance suite on SQLite (no server): one database file per case.
runConformance(sqlHarness('sqlite'));
