/**
 * Writes the OpenAPI document of the HTTP API to docs/openapi.json, beside docs/api.md: the same
 * document `GET /openapi.json` answers, generated from the schemas the handlers validate with.
 * A test (test/unit/docs) fails when the file and the code disagree; this script writes it again.
 */
import { writeFileSync } from 'node:fs';
import { buildApiDocument } from '../lambda/api-document/document.js';

const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(buildApiDocument(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
