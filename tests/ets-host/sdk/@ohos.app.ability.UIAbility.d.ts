/* Stand-in for the SDK's api/@ohos.app.ability.UIAbility.d.ts (subset). */
import AbilityConstant from './@ohos.app.ability.AbilityConstant';
import common from './@ohos.app.ability.common';
import Want from './@ohos.app.ability.Want';
import window from './@ohos.window';

export default class UIAbility {
  context: common.UIAbilityContext;
  launchWant: Want;
  onCreate(want: Want, launchParam: AbilityConstant.LaunchParam): void;
  onWindowStageCreate(windowStage: window.WindowStage): void;
  onWindowStageDestroy(): void;
  onForeground(): void;
  onBackground(): void;
  onDestroy(): void | Promise<void>;
}
