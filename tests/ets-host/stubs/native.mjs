// Run-time stand-in for `import rum from 'librum_native.so'`: the real library, loaded into Node
// by the shared loader (tests/shared/native.mjs says which file RUM_NATIVE_LIB selects).
import { loadNative } from '../../shared/native.mjs';

export { libraryPath as nativeLibraryPath } from '../../shared/native.mjs';
export default loadNative();
