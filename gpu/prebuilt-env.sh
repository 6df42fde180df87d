# Sourced by the device scripts (check-on-device.sh, profile-on-device.sh):
# makes the programs carried in .device-prebuilt (gpu/device-prebuild.sh)
# runnable here and names them in test_gpu, test_llm, sixstep and bandwidth.
# Returns 1, with the reason in prebuilt_why, when there are none or they
# cannot find this tree.
prebuilt=.device-prebuilt
prebuilt_why=""
use_prebuilt_programs() {
    if [ ! -x "$prebuilt/bin/sixstep" ]; then prebuilt_why="no $prebuilt/bin/sixstep"; return 1; fi
    export LD_LIBRARY_PATH="$PWD/$prebuilt/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # The programs were built in another tree, whose path they carry (the
    # tests' data): make that path lead here when it is free.
    local src
    src=$(cat "$prebuilt/source-dir")
    if [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
    if [ "$(cd "$src" 2>/dev/null && pwd -P)" != "$(pwd -P)" ]; then
        prebuilt_why="$src (the tree they were built in) is not this tree's copy"
        return 1
    fi
    export SIXSTEP_DATA_DIR="$PWD"
    test_gpu="$prebuilt/bin/test_gpu" test_llm="$prebuilt/bin/test_llm" sixstep="$prebuilt/bin/sixstep"
    bandwidth="$prebuilt/bin/sixstep-cuda-bandwidth"
    prebuilt_source="$src"
}
