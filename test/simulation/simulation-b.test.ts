/** Seeds 1001–2000 of the simulation (see seeds.ts), in a second file so that both workers run seeds. */
import { describeSeeds } from './seeds.js';

describeSeeds(1001, 1000);
