/* Stand-in for the SDK's api/@ohos.app.ability.AbilityConstant.d.ts (subset). */
declare namespace AbilityConstant {
  export interface LaunchParam {
    launchReason: LaunchReason;
    lastExitReason: LastExitReason;
    lastExitMessage: string;
  }

  export enum LaunchReason {
    UNKNOWN = 0,
    START_ABILITY = 1,
    CALL = 2,
    CONTINUATION = 3,
    APP_RECOVERY = 4,
    SHARE = 5
  }

  export enum LastExitReason {
    UNKNOWN = 0,
    ABILITY_NOT_RESPONDING = 1,
    NORMAL = 2,
    CPP_CRASH = 3,
    JS_ERROR = 4
  }
}

export default AbilityConstant;
