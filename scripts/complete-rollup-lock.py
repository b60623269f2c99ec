#!/usr/bin/env python3
# Run after `npm install` if `npm ci` then reports "Missing: @rollup/rollup-<platform>@ from lock file":
#   python3 scripts/complete-rollup-lock.py package-lock.json
# The registry mirror of our machines serves only the Linux packages, so npm leaves the others out.
# Adds lock entries for rollup's platform packages that the registry mirror does not serve, so that
# `npm ci` accepts the lock (npm/cli#4828). Each is optional and platform-specific: npm never fetches
# one whose os/cpu/libc does not match the machine.
import json, sys
path = sys.argv[1]
lock = json.load(open(path))
packages = lock['packages']
rollups = [(k, v) for k, v in packages.items() if k.endswith('node_modules/rollup')]
added = 0
for key, rollup in rollups:
    prefix = key[: -len('rollup')]
    for name, version in rollup.get('optionalDependencies', {}).items():
        entry_key = prefix + name
        if entry_key in packages or ('node_modules/' + name) in packages and packages['node_modules/' + name]['version'] == version:
            continue
        platform = name.split('/rollup-', 1)[1]
        parts = platform.split('-')
        os_name, cpu = parts[0], parts[1]
        rest = parts[2:]
        libc = None
        if os_name == 'linux':
            libc = 'musl' if rest and rest[0].startswith('musl') else 'glibc'
        cpu = {'arm': 'arm', 'arm64': 'arm64', 'x64': 'x64', 'ia32': 'ia32', 'loong64': 'loong64', 'ppc64': 'ppc64', 'riscv64': 'riscv64', 's390x': 's390x'}[cpu]
        if os_name == 'win32': os_name = 'win32'
        entry = {'version': version, 'cpu': [cpu]}
        if libc: entry['libc'] = [libc]
        entry['license'] = 'MIT'
        entry['optional'] = True
        entry['os'] = [os_name]
        if rollup.get('dev'): entry['dev'] = True
        packages['node_modules/' + name if prefix == 'node_modules/' else entry_key] = entry
        added += 1
lock['packages'] = dict(sorted(packages.items(), key=lambda kv: (kv[0] != '', kv[0])))
json.dump(lock, open(path, 'w'), indent=2, ensure_ascii=False)
open(path, 'a').write('\n')
print('added', added)
