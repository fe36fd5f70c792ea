// Run-time stand-in for @ohos.display (what @kit.ArkUI re-exports as `display`) on the host:
// getDefaultDisplaySync returns `display.host.display` (a phone's 1260 × 2720 px), or throws
// `display.host.error` when set (the device throws 1400001 without a display); `host.reset()`
// restores both.
const DISPLAY = Object.freeze({
  id: 0, name: 'host', width: 1260, height: 2720, densityDPI: 480, densityPixels: 3, refreshRate: 120
});

const host = {
  display: { ...DISPLAY },
  error: null,
  calls: 0,
  reset() {
    this.display = { ...DISPLAY };
    this.error = null;
    this.calls = 0;
  }
};

const display = {
  getDefaultDisplaySync() {
    host.calls++;
    if (host.error !== null) {
      throw host.error;
    }
    return { ...host.display };
  },
  host
};

export default display;
