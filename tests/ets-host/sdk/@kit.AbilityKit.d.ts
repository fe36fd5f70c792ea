/* Stand-in for the SDK's kits/@kit.AbilityKit.d.ts (subset). */
import AbilityConstant from './@ohos.app.ability.AbilityConstant';
import ApplicationStateChangeCallback from './@ohos.app.ability.ApplicationStateChangeCallback';
import common from './@ohos.app.ability.common';
import bundleManager from './@ohos.bundle.bundleManager';
import UIAbility from './@ohos.app.ability.UIAbility';
import Want from './@ohos.app.ability.Want';

export { AbilityConstant, ApplicationStateChangeCallback, bundleManager, common, UIAbility, Want };
