/**
 * The isomorphic-git commands the `git` shell command uses (command.ts), loaded with a dynamic
 * `import()` on the first `git`. Importing the package itself that way hands back its whole namespace
 * (and its default export is an object of every command), so the bundler kept all of them — merge,
 * stash, notes, tags…; naming the used ones here lets it drop the rest (docs/performance.md, "The bundle").
 * A command used in command.ts but missing here is a type error there.
 */
export {
  STAGE,
  add,
  addRemote,
  branch,
  checkout,
  clone,
  commit,
  currentBranch,
  deleteBranch,
  findRoot,
  getConfig,
  getRemoteInfo,
  init,
  listBranches,
  listFiles,
  listRemotes,
  log,
  push,
  readBlob,
  remove,
  resolveRef,
  setConfig,
  statusMatrix,
  version,
  walk,
} from "isomorphic-git";
