// Check 1: every .ets, .json5 and .json file of the hvigor project parses.
//   .ets   — ohos-typescript, the ArkTS fork of TypeScript that DevEco's compiler is built on,
//            with ArkUI component syntax (struct, `Column() { ... }`, decorators);
//   .json5 — the json5 package (the format hvigor and ohpm read);
//   .json  — JSON.parse (resources, main_pages.json).
// (@ohos-rs/oxk would do too, but its npm release lacks most of its platform packages, which
// breaks `npm ci` from the lock file.)
// Also: HAR sources (ets/) declare no UI component and import no ArkUI module.
import { createRequire } from 'node:module';
import { etsFiles, isUiSource, json5Files, jsonFiles, read, rel } from './files.mjs';

const require = createRequire(import.meta.url);
const ts = require('ohos-typescript');
const JSON5 = require('json5');

/** ArkUI components (for the ETS parser: `Column() { ... }` is a component, not a call). */
export const ARKUI_COMPONENTS = [
  'AlphabetIndexer', 'Badge', 'Blank', 'Button', 'Calendar', 'Canvas', 'Checkbox', 'CheckboxGroup', 'Circle',
  'Column', 'ColumnSplit', 'Counter', 'DataPanel', 'DatePicker', 'Divider', 'Ellipse', 'Flex', 'FlowItem',
  'ForEach', 'Gauge', 'Grid', 'GridCol', 'GridItem', 'GridRow', 'Hyperlink', 'If', 'Image', 'ImageAnimator',
  'LazyForEach', 'Line', 'List', 'ListItem', 'ListItemGroup', 'LoadingProgress', 'Marquee', 'Menu', 'MenuItem',
  'NavDestination', 'Navigation', 'Navigator', 'Panel', 'Path', 'PatternLock', 'Polygon', 'Polyline', 'Progress',
  'QRCode', 'Radio', 'Rating', 'Rect', 'Refresh', 'RelativeContainer', 'Repeat', 'RichText', 'Row', 'RowSplit',
  'Scroll', 'ScrollBar', 'Search', 'Select', 'Shape', 'SideBarContainer', 'Slider', 'Span', 'Stack', 'Stepper',
  'StepperItem', 'Swiper', 'TabContent', 'Tabs', 'Text', 'TextArea', 'TextClock', 'TextInput', 'TextPicker',
  'TextTimer', 'TimePicker', 'Toggle', 'Video', 'Web', 'WaterFlow', 'XComponent'
];

/** The `ets` compiler option of ohos-typescript, reduced to what parsing needs. */
export const ETS_OPTIONS = {
  render: { method: ['build', 'pageTransition'], decorator: ['Builder', 'LocalBuilder'] },
  components: ARKUI_COMPONENTS,
  libs: [],
  extend: { decorator: ['Extend', 'AnimatableExtend'], components: [] },
  styles: {
    decorator: 'Styles',
    component: { name: 'Common', type: 'T', instance: 'CommonInstance' },
    property: 'stateStyles'
  },
  concurrent: { decorator: 'Concurrent' },
  customComponent: 'CustomComponent',
  propertyDecorators: [],
  emitDecorators: [],
  syntaxComponents: { paramsUICallback: ['ForEach', 'LazyForEach', 'Repeat'], attrUICallback: [] }
};

const UI_MODULES = /from\s+['"](@kit\.ArkUI|@ohos\.arkui\.[\w.]+|@ohos\.router|@ohos\.promptAction|@ohos\.window)['"]/;
/** An import of UI_MODULES that loads values (not `import type`). */
const UI_VALUE_IMPORT = new RegExp(`^\\s*import\\s+(?!type\\b)[^;]*?${UI_MODULES.source}`, 'm');
/** The HAR's automatic capture: the observers of ArkUI it registers. */
const AUTO_CAPTURE_DIR = 'ets/src/main/ets/auto/';

function position(text, offset) {
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

/** Returns a list of problems, one string each (`path:line:col message`). */
export function checkParse() {
  const problems = [];
  const counts = { ets: 0, json5: 0, json: 0 };
  for (const f of etsFiles()) {
    counts.ets++;
    const text = read(f);
    const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.ETS, { ets: ETS_OPTIONS });
    for (const d of sf.parseDiagnostics) {
      problems.push(`${rel(f)}:${position(text, d.start)}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    }
    if (rel(f).startsWith('ets/')) {
      if (isUiSource(text)) {
        problems.push(`${rel(f)}: the HAR is UI-free: move components to entry/`);
      }
      // Automatic capture (ets/src/main/ets/auto/) registers ArkUI's observers: the one place the
      // HAR imports ArkUI values; elsewhere only its types (`import type`).
      const ui = rel(f).startsWith(AUTO_CAPTURE_DIR) ? null : UI_VALUE_IMPORT.exec(text);
      if (ui) {
        problems.push(
          `${rel(f)}:${position(text, ui.index)}: the HAR is UI-free outside ${AUTO_CAPTURE_DIR}: ` +
          `it must not import ${ui[1]} (import type is fine)`
        );
      }
    }
  }
  for (const f of json5Files()) {
    counts.json5++;
    const text = read(f);
    try {
      JSON5.parse(text);
    } catch (e) {
      problems.push(`${rel(f)}: json5: ${e.message}`);
    }
  }
  for (const f of jsonFiles()) {
    counts.json++;
    try {
      JSON.parse(read(f));
    } catch (e) {
      problems.push(`${rel(f)}: ${e.message}`);
    }
  }
  return { problems, summary: `${counts.ets} .ets, ${counts.json5} .json5, ${counts.json} .json` };
}
