/* Stand-in for the SDK's api/@ohos.i18n.d.ts (subset, SDK signatures). */
declare namespace i18n {
  export class System {
    static getSystemLanguage(): string;
    static getSystemRegion(): string;
    /** @deprecated since 20, use getSystemLocaleInstance */
    static getSystemLocale(): string;
    /** @since 20 */
    static getSystemLocaleInstance(): Intl.Locale;
  }
}

export default i18n;
