/* Stand-in for the SDK's kits/@kit.ArkTS.d.ts (the modules the project imports). */
import collections from './@arkts.collections';
import lang from './@arkts.lang';
import process from './@ohos.process';
import taskpool from './@ohos.taskpool';
import util from './@ohos.util';

export { collections, lang, process, taskpool, util };
