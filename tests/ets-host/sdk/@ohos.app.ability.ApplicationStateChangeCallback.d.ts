/* Stand-in for the SDK's api/@ohos.app.ability.ApplicationStateChangeCallback.d.ts. */
export default class ApplicationStateChangeCallback {
  onApplicationForeground(): void;
  onApplicationBackground(): void;
}
