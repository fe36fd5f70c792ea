#!/usr/bin/env bash
# Host checks of the HarmonyOS side: the HAR (ets/), the demo HAP (entry/) and the hvigor project
# files, against the real HarmonyOS SDK's ArkTS declarations when one is present.
#
# SDK (tests/ets-host/lib/sdk.mjs; the first found is used, and the run says which):
#   RUM_OHOS_SDK=<dir>     any level of an SDK (…/sdk, …/default/openharmony, …/ets); `none` forces
#                          the stand-ins
#   DEVECO_SDK_HOME        DevEco Studio's SDK (holds default/openharmony/ets)
#   OHOS_SDK_HOME, OHOS_BASE_SDK_HOME   the Command Line Tools' SDK
#   $ROOT/../shared/ohos-sdk            the shared copy next to the repository (CI)
# Without one, lint and typecheck use the stand-ins in tests/ets-host/sdk/ (non-UI files only).
#
#   parse      every .ets / .json5 / .json parses (ohos-typescript, json5)
#   project    hvigor files agree: modules, task types, model versions, packages, resources; the
#              version strings as DevEco Studio 26 writes them (targetSdkVersion and modelVersion
#              26.0.0, compatibleSdkVersion "<x.y.z>(<api>)" below API 26)
#   rules      what es2abc, worker threads and obfuscation need that the linter does not check: a
#              @Concurrent function uses only imports, parameters and its locals; no file loaded
#              (through value imports) with a @Concurrent function or a @Sendable class imports
#              librum_native.so as a value (`import type` only); both keep lists
#              (-keep-property-name) name every property and method of index.d.ts
#   lint       ohos-typescript's ArkTS linter with the options DevEco's compiler sets
#              (needDoArkTsLinter, isCompatibleVersion false, ets-loader's tsconfig): every .ets
#              of ets/ and entry/, UI pages included; any error or warning fails
#   typecheck  with the SDK: ohos-typescript's type check of the same program (ETS mode, the
#              SDK's ArkUI declarations, librum_native.so typed by its index.d.ts), errors and
#              warnings (e.g. 28040 "Function may throw exceptions") both fail; without it:
#              tsc --noEmit of the non-UI files against the stand-ins
#   since      with the SDK: every SDK declaration the .ets files use (resolved by the type
#              checker: imports, the overload called, object-literal members) is @since at most
#              compatibleSdkVersion's API, which is the highest level used; skipped without an SDK
#   facade     tests/ets-host/*.test.mjs run the facade, built from ets/, against the real
#              librum_native.so (RUM_NATIVE_LIB=debug|release|<path>, default release) and a
#              loopback intake
#   ohos       (with --ohos or RUM_CHECK_OHOS=1) scripts/check-ohos.sh: nightly cargo check of
#              the cfg(target_env = "ohos") code for aarch64-unknown-linux-ohos
#
# Installs its npm packages into tests/ets-host/node_modules (npm ci from package-lock.json).
# Exit status: 0 when every check passed, 1 otherwise.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOST="$ROOT/tests/ets-host"
RUN_OHOS="${RUM_CHECK_OHOS:-0}"
for arg in "$@"; do
  case "$arg" in
    --ohos) RUN_OHOS=1 ;;
    -h | --help)
      sed -n '2,39p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "check-ets: unknown argument $arg (use --ohos or --help)" >&2
      exit 2
      ;;
  esac
done

declare -a NAMES=()
declare -a RESULTS=()
record() {
  NAMES+=("$1")
  RESULTS+=("$2")
}

command -v node >/dev/null || {
  echo "check-ets: node (>= 20) is required" >&2
  exit 1
}
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if ((NODE_MAJOR < 20)); then
  echo "check-ets: node >= 20 is required, found $(node --version)" >&2
  exit 1
fi

# npm packages: reinstall when the lock changed since the last install.
if [[ ! -f "$HOST/node_modules/.package-lock.json" || "$HOST/package-lock.json" -nt "$HOST/node_modules/.package-lock.json" ]]; then
  echo "== npm ci (tests/ets-host)"
  if ! (cd "$HOST" && npm ci --no-audit --no-fund --loglevel=error); then
    echo "check-ets: npm ci failed in tests/ets-host" >&2
    record "npm ci" FAIL
  fi
fi

if [[ ${#NAMES[@]} -eq 0 ]]; then
  # Which ArkTS declarations lint and typecheck use (prints the choice on stderr).
  if SDK_ETS="$(cd "$HOST" && node lib/sdk.mjs)"; then
    if [[ -n "$SDK_ETS" ]]; then
      export RUM_OHOS_SDK="$SDK_ETS"
    else
      export RUM_OHOS_SDK=none
    fi
  else
    record sdk FAIL
  fi
fi

if [[ ${#NAMES[@]} -eq 0 ]]; then
  for check in parse project rules lint typecheck since; do
    echo "== $check"
    if (cd "$HOST" && node check.mjs "$check"); then
      record "$check" PASS
    else
      record "$check" FAIL
    fi
  done

  echo "== facade (node --test tests/ets-host, RUM_NATIVE_LIB=${RUM_NATIVE_LIB:-release})"
  if (cd "$HOST" && node --test ./*.test.mjs); then
    record facade PASS
  else
    record facade FAIL
  fi
fi

if [[ "$RUN_OHOS" == 1 ]]; then
  echo "== ohos (scripts/check-ohos.sh)"
  if "$ROOT/scripts/check-ohos.sh"; then
    record ohos PASS
  else
    record ohos FAIL
  fi
fi

echo
echo "check-ets summary"
passed=0
failed=0
for i in "${!NAMES[@]}"; do
  printf '  %-10s %s\n' "${NAMES[$i]}" "${RESULTS[$i]}"
  if [[ "${RESULTS[$i]}" == PASS ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "check-ets: $passed passed, $failed failed"
((failed == 0))
