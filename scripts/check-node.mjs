// Every npm script runs on the Node that the pinned `node` devDependency installs (Lambda's nodejs24.x).
// `npm ci --ignore-scripts` skips that package's install step and leaves the machine's Node in charge:
// fail loudly instead of testing on the wrong runtime.
const required = 24;
const major = Number(process.versions.node.split('.')[0]);
if (major !== required) {
  console.error(
    `check-node: this project runs on Node ${required} (Lambda nodejs${required}.x), but npm started Node ${process.versions.node}.\n` +
      'The pinned `node` devDependency provides it: run `npm ci` (without --ignore-scripts) and call tools through `npm run` or `npx`.',
  );
  process.exit(1);
}
