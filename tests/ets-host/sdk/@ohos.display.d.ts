/* Stand-in for the SDK's api/@ohos.display.d.ts (subset, SDK signatures). */
declare namespace display {
  /** @throws { BusinessError } 1400001 - Invalid display or screen. */
  function getDefaultDisplaySync(): Display;

  interface Display {
    id: number;
    name: string;
    width: number;
    height: number;
    densityDPI: number;
    densityPixels: number;
    refreshRate: number;
  }
}

export default display;
