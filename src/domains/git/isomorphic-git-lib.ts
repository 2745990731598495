/**
 * The isomorphic-git commands the `git` shell command uses (command.ts, and clone.ts for its
 * streaming clone), loaded with a dynamic `import()` on the first `git`. Importing the package itself
 * that way hands back its whole namespace (and its default export is an object of every command), so
 * the bundler kept all of them — merge, stash, notes, tags…; naming the used ones here lets it drop the
 * rest (docs/performance.md, "The bundle"). A command used in command.ts or clone.ts but missing here is
 * a type error there.
 */
export {
  STAGE,
  add,
  addRemote,
  branch,
  checkout,
  commit,
  currentBranch,
  deleteBranch,
  findRoot,
  getConfig,
  getRemoteInfo,
  getRemoteInfo2,
  init,
  listBranches,
  listFiles,
  listRemotes,
  log,
  push,
  readBlob,
  readCommit,
  readObject,
  remove,
  resolveRef,
  setConfig,
  statusMatrix,
  version,
  walk,
  writeObject,
  writeRef,
} from "isomorphic-git";
