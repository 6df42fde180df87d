#!/usr/bin/env bash
# Run HERE (a Debian build machine with the CUDA toolkit), before
# gpu/check-on-device.sh is sent to a GPU machine: builds the four programs the
# device checks run (sixstep without the window, test_gpu, test_llm,
# sixstep-cuda-bandwidth) as the release build does, for architectures 80 and
# 90, and packs them with the shared libraries they need that are not part of
# the C/C++ runtime into .device-prebuilt (ignored by git). The GPU machine
# then spends none of its time compiling, and runs the binaries CI builds
# rather than ones made by another compiler against other libraries.
#     bash gpu/device-prebuild.sh            # build/device-prebuilt, then .device-prebuilt
#     device run: bash gpu/check-on-device.sh   # carry [".device-prebuilt"]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/device-prebuilt
dest=.device-prebuilt
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSIXSTEP_NATIVE=OFF -DSIXSTEP_BUILD_GUI=OFF \
    -DSIXSTEP_BUILD_EXAMPLES=OFF >/dev/null
# (sixstep-cuda-bandwidth and test_gpu exist only when configure found CUDA.)
cmake --build "$build" -j "$(nproc)" --target test_gpu test_llm sixstep sixstep-cuda-bandwidth
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib"
cp "$build/sixstep" "$build/tests/test_gpu" "$build/tests/test_llm" "$build/gpu/sixstep-cuda-bandwidth" "$dest/bin/"
# Every shared library the programs load except the C and C++ runtimes (the
# device's own, newer ones serve) and the kernel's vdso.
ldd "$dest"/bin/* | awk '/=> \//{print $3}' | sort -u |
    grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$dest/lib/"; done
# The programs name this tree's path (test data, the data directory): the
# device script makes that path lead to its own copy.
echo "$PWD" >"$dest/source-dir"
git rev-parse --short HEAD >"$dest/commit"
git diff --quiet HEAD -- . ':!.device-prebuilt' || echo "+ uncommitted changes" >>"$dest/commit"
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$dest/" "$exclude" 2>/dev/null || echo "/$dest/" >>"$exclude"
echo "device-prebuild: $(ls "$dest/bin" | tr '\n' ' ')+ $(ls "$dest/lib" | wc -l) libraries in $dest ($(du -sh "$dest" | cut -f1)); carry it: [\"$dest\"]"
