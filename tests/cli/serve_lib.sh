# Shared by the `edgemm serve` test scripts (source it after check_lib.sh, with $bin, $tmp, $py and
# the array `pids` of processes to kill on exit set): starting servers on free ports.

# launch_server NAME ARGS...: starts `edgemm serve --port 0 --json ARGS...` in the background,
# its stdout in $tmp/NAME.out and stderr in $tmp/NAME.err; sets $server and adds it to pids.
launch_server() {
  local name="$1"
  shift
  "$bin" serve --port 0 --json "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  server=$!
  pids+=("$server")
}

# await_server NAME PID: waits until that server is ready and sets $port from its "listening"
# line; when it exits or is not ready within 60 s, counts a failure, shows its stderr and returns 1.
await_server() {
  local name="$1" pid="$2"
  port=""
  for _ in $(seq 600); do
    if grep -q '"event":"ready"' "$tmp/$name.out" 2>/dev/null; then
      port=$($py -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['port'])" "$tmp/$name.out")
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  failed=$((failed + 1))
  echo "FAIL $name: the server did not get ready"
  sed 's/^/  | /' "$tmp/$name.err" | tail -5
  return 1
}

# start_server NAME ARGS...: launch_server, then await_server; sets $server and $port.
start_server() {
  launch_server "$@"
  await_server "$1" "$server"
}
