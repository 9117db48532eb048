/** Seeds 1–1000 of the simulation (see seeds.ts); simulation-b runs the next thousand beside it. */
import { describeSeeds } from './seeds.js';

describeSeeds(1, 1000);
