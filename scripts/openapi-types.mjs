// TypeScript declarations of the controller's API, generated from docs/openapi.json
// (which `make openapi` regenerates from the code), for the lab extension and, through
// JSDoc imports, the pages. `--check` writes nothing and fails when the file is stale,
// so lint catches an API change whose types were not regenerated.
import { readFile, writeFile } from 'node:fs/promises';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import prettier from 'prettier';

const SOURCE = 'docs/openapi.json';
const TARGETS = ['src/apiSchema.d.ts'];
const HEADER = `${COMMENT_HEADER}// From ${SOURCE} by \`jlpm openapi:types\`; generated, hence its length.\n\n`;

async function generate(target) {
  const spec = JSON.parse(await readFile(SOURCE, 'utf8'));
  // defaultNonNullable off: a field with a default stays optional, as the document's
  // `required` lists say (a request may leave it out).
  const ast = await openapiTS(spec, { silent: true, defaultNonNullable: false });
  const text = HEADER + astToString(ast);
  // Formatted as the repository's other TypeScript is, so prettier:check passes on it.
  const options = (await prettier.resolveConfig(target)) ?? {};
  return prettier.format(text, { ...options, filepath: target });
}

async function current(target) {
  try {
    return await readFile(target, 'utf8');
  } catch {
    return null;
  }
}

const check = process.argv.includes('--check');
let stale = 0;
for (const target of TARGETS) {
  const text = await generate(target);
  if (!check) {
    await writeFile(target, text);
  } else if ((await current(target)) !== text) {
    console.error(`${target} is stale: run \`jlpm openapi:types\` after \`make openapi\``);
    stale += 1;
  }
}
process.exitCode = stale ? 1 : 0;
