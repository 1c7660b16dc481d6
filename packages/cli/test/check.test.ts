// `cairn check`, `cairn export` and the divergence in `cairn show` against SQLite (embedded: also
// runs under Node 22 in `test:embedded`), with the cases that do not depend on the backend.
import { checkCases } from './support/check-cases.js';
import { sqliteTarget } from './support/sqlite-target.js';

checkCases(sqliteTarget('cairn-cli-check-sqlite-'));
