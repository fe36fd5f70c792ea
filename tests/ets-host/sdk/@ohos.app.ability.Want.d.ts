/* Stand-in for the SDK's api/@ohos.app.ability.Want.d.ts (subset). */
export default class Want {
  bundleName?: string;
  abilityName?: string;
  moduleName?: string;
  uri?: string;
  action?: string;
}
