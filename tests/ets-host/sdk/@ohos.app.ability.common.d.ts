import AbilityLifecycleCallback from './@ohos.app.ability.AbilityLifecycleCallback';
/* Stand-in for the SDK's api/@ohos.app.ability.common.d.ts and application/*Context.d.ts (subset). */
import ApplicationStateChangeCallback from './@ohos.app.ability.ApplicationStateChangeCallback';

declare class BaseContext {
  stageMode: boolean;
}

declare class Context extends BaseContext {
  cacheDir: string;
  tempDir: string;
  filesDir: string;
  databaseDir: string;
  preferencesDir: string;
  bundleCodeDir: string;
  getApplicationContext(): ApplicationContext;
}

declare class ApplicationContext extends Context {
  on(type: 'abilityLifecycle', callback: AbilityLifecycleCallback): number;
  off(type: 'abilityLifecycle', callbackId: number): Promise<void>;
  on(type: 'applicationStateChange', callback: ApplicationStateChangeCallback): void;
  off(type: 'applicationStateChange', callback?: ApplicationStateChangeCallback): void;
}

declare class UIAbilityContext extends Context {
  terminateSelf(): Promise<void>;
}

declare namespace common {
  type Context = ContextAlias;
  type ApplicationContext = ApplicationContextAlias;
  type UIAbilityContext = UIAbilityContextAlias;
}

type ContextAlias = Context;
type ApplicationContextAlias = ApplicationContext;
type UIAbilityContextAlias = UIAbilityContext;

export default common;
