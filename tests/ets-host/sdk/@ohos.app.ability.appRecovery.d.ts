/* Stand-in for the SDK's api/@ohos.app.ability.appRecovery.d.ts (subset). */
declare namespace appRecovery {
  function restartApp(): void;
  function saveAppState(): boolean;
}

export default appRecovery;
