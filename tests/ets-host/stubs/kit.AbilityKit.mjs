// Run-time stand-in for @kit.AbilityKit: the facade uses most of these for types only; tests pass
// a context object of their own (filesDir, getApplicationContext().on/off).
//   bundleManager — getBundleInfoForSelfSync returns `bundleManager.host.bundle` (the demo's
//                   AppScope/app.json5 values), or throws `bundleManager.host.error` when set;
//                   `host.reset()` restores both.
export const common = {};

const BUNDLE = Object.freeze({
  name: 'com.example.rumburst',
  vendor: 'example',
  versionCode: 1000000,
  versionName: '1.0.0',
  minCompatibleVersionCode: 1000000,
  targetVersion: 26
});

const bundleHost = {
  bundle: { ...BUNDLE },
  error: null,
  calls: 0,
  reset() {
    this.bundle = { ...BUNDLE };
    this.error = null;
    this.calls = 0;
  }
};

export const bundleManager = {
  BundleFlag: { GET_BUNDLE_INFO_DEFAULT: 0, GET_BUNDLE_INFO_WITH_APPLICATION: 1, GET_BUNDLE_INFO_WITH_HAP_MODULE: 2 },
  getBundleInfoForSelfSync(flags) {
    bundleHost.calls++;
    if (typeof flags !== 'number') {
      throw Object.assign(new Error('Parameter error'), { code: 401 });
    }
    if (bundleHost.error !== null) {
      throw bundleHost.error;
    }
    return { ...bundleHost.bundle };
  },
  host: bundleHost
};
export class ApplicationStateChangeCallback {}
export const AbilityConstant = {};
export class UIAbility {}
export class Want {}
