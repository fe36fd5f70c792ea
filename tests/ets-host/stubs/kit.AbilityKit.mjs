// Run-time stand-in for @kit.AbilityKit: the facade uses these for types only; tests pass a
// context object of their own (filesDir, getApplicationContext().on/off).
export const common = {};
export class ApplicationStateChangeCallback {}
export const AbilityConstant = {};
export class UIAbility {}
export class Want {}
