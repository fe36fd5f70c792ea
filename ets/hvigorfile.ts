import { harTasks } from '@ohos/hvigor-ohos-plugin';
import { rumNativeLibraryPlugin } from './nativeLibraryTask';

export default {
  system: harTasks, /* Built-in plugin of Hvigor. It cannot be modified. */
  /* Before default@PreBuild: libs/arm64-v8a/librum_native.so exists and is newer than the Rust
     sources, built when OHOS_NDK_HOME is set, else the build stops and says how (nativeLibraryTask.ts). */
  plugins: [rumNativeLibraryPlugin()]
}
