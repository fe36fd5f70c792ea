/* Stand-in for the SDK's api/@ohos.util.d.ts (subset). */
declare namespace util {
  function generateRandomUUID(entropyCache?: boolean): string;
}

export default util;
