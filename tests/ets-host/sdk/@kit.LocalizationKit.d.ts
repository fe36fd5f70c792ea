/* Stand-in for the SDK's kits/@kit.LocalizationKit.d.ts (subset). */
import i18n from './@ohos.i18n';

export { i18n };
