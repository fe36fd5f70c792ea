/* Stand-in for the SDK's kits/@kit.AbilityKit.d.ts (subset). */
import AbilityConstant from './@ohos.app.ability.AbilityConstant';
import AbilityLifecycleCallback from './@ohos.app.ability.AbilityLifecycleCallback';
import appRecovery from './@ohos.app.ability.appRecovery';
import errorManager from './@ohos.app.ability.errorManager';
import ApplicationStateChangeCallback from './@ohos.app.ability.ApplicationStateChangeCallback';
import common from './@ohos.app.ability.common';
import bundleManager from './@ohos.bundle.bundleManager';
import UIAbility from './@ohos.app.ability.UIAbility';
import Want from './@ohos.app.ability.Want';

export { AbilityConstant, AbilityLifecycleCallback, ApplicationStateChangeCallback, appRecovery, bundleManager, common, errorManager, UIAbility, Want };
