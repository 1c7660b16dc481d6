import { runConformance } from '@cairn/conformance';
import { mongoHarness } from './support/conformance-harness.js';

// The whole conformance suite against one MongoDB-protocol server: CAIRN_TEST_MONGODB_URL, else
// Testcontainers, else a local FerretDB (tools/ferretdb-runner). Without one every case is skipped
// with the reason printed, unless CAIRN_TEST_REQUIRE names mongodb (or is `all`): then it fails.
runConformance(await mongoHarness());
