# Shared by the CLI test scripts (source it after setting $tmp): each check counts into
# $passed / $failed, and report_and_exit prints the totals and fails when any check failed.
passed=0 failed=0
check() {  # check NAME EXPECTED_EXIT CMD...  (stdout → $tmp/out, stderr → $tmp/err)
  local name="$1" want="$2"
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" = "$want" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $got, expected $want"
    sed 's/^/  | /' "$tmp/err" | head -5
  fi
}
expect_text() {  # expect_text NAME FILE PATTERN
  if grep -q -- "$3" "$2"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: '$3' not in $(basename "$2")"
    sed 's/^/  | /' "$2" | head -5
  fi
}
# ids: the "ids" of the JSON in $tmp/out, as JSON.
ids() { /usr/bin/python3 -c "import json; print(json.dumps(json.load(open('$tmp/out'))['ids']))"; }
same_ids() {  # same_ids NAME WANT_JSON: the ids in $tmp/out are WANT_JSON
  if [ "$(ids 2>/dev/null)" = "$2" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: ids $(ids 2>/dev/null) != $2"
  fi
}
report_and_exit() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}
