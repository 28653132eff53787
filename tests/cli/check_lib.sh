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
demo_lines_read() {  # demo_lines_read NAME OCR_TEXT ROOT: the text read has the lines drawn on
  # ROOT/data/demo/photo_text.jpg (their labels, data/demo/photo_text.json) with at most 2 edits in all
  check "$1" 0 /usr/bin/python3 -c '
import json, sys, unicodedata
norm = lambda s: unicodedata.normalize("NFKC", s).replace(" ", "")
read = norm(open(sys.argv[2], encoding="utf-8").read().replace("\n", ""))
def edits(line):  # fewest edits turning `line` into some substring of `read`
    row = [0] * (len(read) + 1)
    for i, ch in enumerate(line, 1):
        prev, row = row, [i] + [0] * len(read)
        for j, r in enumerate(read, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ch != r))
    return min(row)
costs = {l["text"]: edits(norm(l["text"])) for l in json.load(open(sys.argv[1]))["lines"]}
assert sum(costs.values()) <= 2, {t: c for t, c in costs.items() if c}
' "$3/data/demo/photo_text.json" "$2"
}
report_and_exit() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}
