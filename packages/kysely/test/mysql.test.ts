import { after } from 'node:test';
import { stopSharedServices } from '@cairn/conformance/services';
import { storeCases } from './support/cases.js';
import { serverTarget } from './support/targets.js';

// Skips (with the reason printed) when no MySQL or MariaDB can be had, unless CAIRN_TEST_REQUIRE names it.
storeCases(await serverTarget('mysql'));
after(() => stopSharedServices());
