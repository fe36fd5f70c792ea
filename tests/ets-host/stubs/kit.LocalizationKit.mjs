// Run-time stand-in for @kit.LocalizationKit on the host:
//   i18n.System — getSystemLocaleInstance() is an Intl.Locale of `i18n.host.locale` (zh-Hans-CN),
//                 or throws `i18n.host.error` when set; getSystemLocale() (deprecated since API 20)
//                 is its string; `host.reset()` restores both.
const host = {
  locale: 'zh-Hans-CN',
  error: null,
  reset() {
    this.locale = 'zh-Hans-CN';
    this.error = null;
  }
};

class System {
  static getSystemLanguage() {
    return new Intl.Locale(host.locale).language;
  }

  static getSystemRegion() {
    return new Intl.Locale(host.locale).region ?? '';
  }

  static getSystemLocale() {
    return System.getSystemLocaleInstance().toString();
  }

  static getSystemLocaleInstance() {
    if (host.error !== null) {
      throw host.error;
    }
    return new Intl.Locale(host.locale);
  }
}

export const i18n = { System, host };
