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
export class AbilityLifecycleCallback {}
export class Want {}

// errorManager — keeps what the facade registers; tests fire it through `errorManager.host`:
//   crash(error)    calls each 'error' observer as the runtime does for an uncaught exception
//                   (onException with the Error when the observer has it, else
//                   onUnhandledException with the runtime's summary text);
//   reject(reason)  calls each 'unhandledRejection' observer;
//   observers(), rejectionObservers(), reset().
const errorHost = {
  errorObservers: new Map(),
  rejectionObservers: new Set(),
  /** 'loopObserver' registrations: { timeout, observer }. */
  loopObservers: [],
  /** A main-thread turn of `ms` just ended: each loop observer whose threshold it passed hears it. */
  slowTurn(ms) {
    for (const { timeout, observer } of [...this.loopObservers]) {
      if (ms > timeout) observer.onLoopTimeOut?.(ms);
    }
  },
  nextId: 1,
  /** Set to make `on` throw, as it does off the main thread (16200001 / 401). */
  onError: null,
  crash(error) {
    for (const o of [...this.errorObservers.values()]) {
      if (typeof o.onException === 'function') {
        o.onException(error);
      } else {
        o.onUnhandledException(`Error name:${error.name}\nError message:${error.message}\nStacktrace:\n${error.stack ?? ''}`);
      }
    }
  },
  crashWithText(text) {
    for (const o of [...this.errorObservers.values()]) o.onUnhandledException(text);
  },
  reject(reason) {
    for (const o of [...this.rejectionObservers]) o(reason, Promise.resolve());
  },
  reset() {
    this.errorObservers.clear();
    this.rejectionObservers.clear();
    this.loopObservers = [];
    this.onError = null;
  },
};

export const errorManager = {
  on(type, observer) {
    if (errorHost.onError !== null) throw errorHost.onError;
    if (type === 'error') {
      if (typeof observer?.onUnhandledException !== 'function') {
        throw Object.assign(new Error('Parameter error'), { code: 401 });
      }
      const id = errorHost.nextId++;
      errorHost.errorObservers.set(id, observer);
      return id;
    }
    if (type === 'unhandledRejection') {
      errorHost.rejectionObservers.add(observer);
      return undefined;
    }
    if (type === 'loopObserver') {
      const [timeout, loop] = [observer, arguments[2]];
      if (typeof timeout !== 'number' || !(timeout > 0) || typeof loop !== 'object') {
        throw Object.assign(new Error('Parameter error'), { code: 401 });
      }
      errorHost.loopObservers.push({ timeout, observer: loop });
      return undefined;
    }
    throw Object.assign(new Error(`Parameter error: ${type}`), { code: 401 });
  },
  off(type, idOrObserver) {
    if (type === 'error') {
      if (!errorHost.errorObservers.delete(idOrObserver)) {
        return Promise.reject(Object.assign(new Error('The specified ID does not exist.'), { code: 16000003 }));
      }
      return Promise.resolve();
    }
    if (type === 'unhandledRejection') {
      if (idOrObserver === undefined) errorHost.rejectionObservers.clear();
      else errorHost.rejectionObservers.delete(idOrObserver);
      return undefined;
    }
    if (type === 'loopObserver') {
      errorHost.loopObservers = errorHost.loopObservers.filter((o) => idOrObserver !== undefined && o.observer !== idOrObserver);
      return undefined;
    }
    throw Object.assign(new Error(`Parameter error: ${type}`), { code: 401 });
  },
  host: errorHost,
};

// appRecovery — records the calls (`appRecovery.host.calls`); `host.onRestart` runs on restartApp.
const recoveryHost = {
  calls: [],
  onRestart: null,
  reset() {
    this.calls = [];
    this.onRestart = null;
  },
};

export const appRecovery = {
  saveAppState() {
    recoveryHost.calls.push('saveAppState');
    return true;
  },
  restartApp() {
    recoveryHost.calls.push('restartApp');
    recoveryHost.onRestart?.();
  },
  host: recoveryHost,
};
