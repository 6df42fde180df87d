#!/usr/bin/env bash
# Run HERE (a Debian build machine with apt), before gpu/check-on-device.sh is
# sent to a GPU machine: that machine's CUDA image has the compiler, CMake and
# ninja but may lack the Debian libraries sixstep builds with, and it cannot
# download anything. This fetches them with apt-get download (no install),
# unpacks them into .device-deps/root (ignored by git) and prints its size;
# the device call then names .device-deps in `carry`.
#     bash gpu/device-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.device-deps
packages=(libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libcli11-dev doctest-dev)
rm -rf "$dest"
mkdir -p "$dest/debs" "$dest/root"
(cd "$dest/debs" && apt-get download "${packages[@]}" >/dev/null)
for deb in "$dest"/debs/*.deb; do dpkg -x "$deb" "$dest/root"; done
rm -rf "$dest/debs" "$dest/root/usr/share/doc"
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$dest/" "$exclude" 2>/dev/null || echo "/$dest/" >>"$exclude"
echo "device-deps: ${packages[*]} unpacked in $dest ($(du -sh "$dest" | cut -f1)); carry it: [\"$dest\"]"
