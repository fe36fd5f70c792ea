/* Stand-in for the SDK's kits/@kit.AbilityKit.d.ts (subset). */
import AbilityConstant from './@ohos.app.ability.AbilityConstant';
import appRecovery from './@ohos.app.ability.appRecovery';
import errorManager from './@ohos.app.ability.errorManager';
import ApplicationStateChangeCallback from './@ohos.app.ability.ApplicationStateChangeCallback';
import common from './@ohos.app.ability.common';
import bundleManager from './@ohos.bundle.bundleManager';
import UIAbility from './@ohos.app.ability.UIAbility';
import Want from './@ohos.app.ability.Want';

export { AbilityConstant, ApplicationStateChangeCallback, appRecovery, bundleManager, common, errorManager, UIAbility, Want };
