#!/usr/bin/env bash
# The soak on the GPU machine, which outlasts one device call (docs/dev/gpu_machine.md):
#   scripts/gpu_soak.sh start [MINUTES] [CYCLES]   builds the module into /root/build-gpu and
#       starts, detached, the training soak (MINUTES, default 20) and the build/run/del cycles
#       (CYCLES, default 200) as two processes; each samples its own GPU memory through NVML
#   scripts/gpu_soak.sh wait [SECONDS]             waits until both ended or SECONDS passed
#       (default 560: under one call's limit), prints their verdicts so far, and copies the
#       logs and JSON to $OUT; call it again, at once, until it says "both ended"
# Exit status of `wait`: 0 when both ended flat, 1 when something grew, 3 while still running.
set -uo pipefail
cd "$(dirname "$0")/.."
SOAK=/root/soak
case "${1:-}" in
  start)
    minutes=${2:-20} cycles=${3:-200}
    cmake -S . -B /root/build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_CUDA=ON \
      -DSTOKER_TESTS=OFF -DSTOKER_CUDA_ARCHITECTURES=native \
      -DPython_EXECUTABLE="$(command -v python3)" > /dev/null || exit 1
    cmake --build /root/build-gpu --target _stoker -j "$(nproc)" > /root/soak-build.log 2>&1 \
      || { tail -30 /root/soak-build.log; exit 1; }
    # The scripts run from a copy: the repo copy is replaced at the next call.
    rm -rf "$SOAK" && mkdir -p "$SOAK" && cp -r scripts bench "$SOAK/"
    export PYTHONPATH=/root/build-gpu/python
    (cd "$SOAK" && python3 scripts/soak.py --probe)
    for run in "train --minutes $minutes --cycles 0" "cycles --minutes 0 --cycles $cycles"; do
      set -- $run
      name=$1; shift
      (cd "$SOAK" && setsid nohup python3 scripts/soak.py "$@" --json "$SOAK/$name.json" \
         > "$SOAK/$name.log" 2>&1 < /dev/null &)
      echo "soak $name started: $*"
    done
    ;;
  wait)
    limit=${2:-560}
    end=$((SECONDS + limit))
    while pgrep -f "scripts/soak.py" > /dev/null && ((SECONDS < end)); do sleep 10; done
    for name in train cycles; do
      echo "== $name"; tail -n 8 "$SOAK/$name.log" 2> /dev/null
      [[ -n "${OUT:-}" ]] && cp "$SOAK/$name".{log,json} "$OUT/" 2> /dev/null
    done
    if pgrep -f "scripts/soak.py" > /dev/null; then echo "still running"; exit 3; fi
    echo "both ended"
    grep -q "soak: flat" "$SOAK/train.log" && grep -q "soak: flat" "$SOAK/cycles.log"
    ;;
  *)
    sed -n '2,10p' "$0"
    exit 2
    ;;
esac
