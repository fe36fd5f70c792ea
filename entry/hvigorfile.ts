import * as path from 'path';
import { hapTasks } from '@ohos/hvigor-ohos-plugin';
import { rumNativeLibraryPlugin } from '../ets/nativeLibraryTask';

export default {
  system: hapTasks, /* Built-in plugin of Hvigor. It cannot be modified. */
  /* The demo HAP carries the HAR's library: the HAR's check runs before this module's
     default@PreBuild too, against the HAR's folder (../ets/nativeLibraryTask.ts). */
  plugins: [rumNativeLibraryPlugin({ harDir: path.resolve(__dirname, '../ets') })]
}
