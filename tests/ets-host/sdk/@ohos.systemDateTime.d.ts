/* Stand-in for the SDK's api/@ohos.systemDateTime.d.ts (subset). */
declare namespace systemDateTime {
  enum TimeType {
    STARTUP = 0,
    ACTIVE = 1
  }
  function getTime(isNanoseconds?: boolean): number;
  function getUptime(timeType: TimeType, isNanoseconds?: boolean): number;
}

export default systemDateTime;
