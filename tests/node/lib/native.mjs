// The Node tests load the library through the shared loader (tests/shared/native.mjs).
export { REPO_ROOT, libraryPath, loadNative } from '../../shared/native.mjs';
