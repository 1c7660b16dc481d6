import { storeCases } from './support/cases.js';
import { sqliteTarget } from './support/targets.js';

storeCases(sqliteTarget());
