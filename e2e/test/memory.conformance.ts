import { memoryHarness, runConformance } from '../src/suite/index.js';

// The reference store must pass every case; only the multi-process ones are skipped, because an
// in-process store cannot be opened twice on one namespace.
runConformance(memoryHarness());
