#!/usr/bin/env bash
# System packages for Workbench's tests on Debian (and Ubuntu): Chromium, which the query editor's
# browser test (tests/test_editor.py) drives through Playwright at /usr/bin/chromium, and Virtuoso
# open source, the second real SPARQL engine the store contract and the leak matrix run on
# (tests/conftest.py starts `virtuoso-t` on free ports with its own database folder).
# Idempotent: installs only what is missing, so it is safe to run again. Needs root or sudo.
set -euo pipefail

packages=(chromium chromium-driver virtuoso-opensource)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]})); then
    as_root=()
    if [ "$(id -u)" -ne 0 ]; then
        as_root=(sudo)
    fi
    "${as_root[@]}" apt-get update
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
else
    echo "already installed: ${packages[*]}"
fi

/usr/bin/chromium --version 2>/dev/null  # its wrapper script chatters on stderr
echo "virtuoso-opensource $(dpkg-query -W -f='${Version}' virtuoso-opensource)"
